"""The PostgreSQL -> SQLite pipe's blocks (issue 24): the next block is fetched by a thread while the
current one is written, fetched blocks are joined into one SQLite transaction (fewer commits, each
paying its syncs), the write lock is never held while the source is slow, and a failure on either
side stops the fetching thread, rolls back what was not committed and is raised."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import psycopg2
import pytest

from snaprepl.dialects.postgres_sqlite_pipe import block_writer, fetch_ahead
from tests.support.databases import PG_ADMIN, RealDatabase

pytestmark = pytest.mark.integration
INSERT = "INSERT INTO t (id, v) VALUES (?, ?)"


@pytest.fixture
def dest(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(tmp_path / "dest.db", isolation_level=None, timeout=30)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER CHECK (v <> 13))")
    yield conn
    conn.close()


def _piped(pg_db: RealDatabase, dest: sqlite3.Connection, select: str, fetch: int, commit: int) -> tuple[int, int]:
    """``select``'s rows through the pipe's fetcher and writer, as the pipe's task runs them: the rows
    written and the commits made."""
    statements: list[str] = []
    dest.set_trace_callback(statements.append)
    with closing(psycopg2.connect(dbname=pg_db.name, **PG_ADMIN)) as src:
        rows = src.cursor(name="snaprepl_pipe")
        rows.execute(select)
        with closing(fetch_ahead(fetch, 2)(rows)) as fetched:
            written = block_writer(INSERT, commit)(dest, fetched)
    dest.set_trace_callback(None)
    return written, sum(s == "COMMIT" for s in statements)


def _fetchers_alive() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "snaprepl-sqlite-pipe-fetch"]


def test_every_row_arrives_once_and_ready_blocks_share_a_commit(pg_db: RealDatabase, dest: sqlite3.Connection) -> None:
    written, commits = _piped(pg_db, dest, "SELECT g, g * 2 FROM generate_series(1, 1000) g", fetch=10, commit=300)

    assert written == 1000
    assert dest.execute("SELECT count(*), sum(v), min(id), max(id) FROM t").fetchone() == (1000, 1001000, 1, 1000)
    assert 4 <= commits < 100, f"{commits} commits for 100 blocks: ready blocks were not joined"
    assert not _fetchers_alive()


def test_the_write_lock_is_free_while_the_source_is_slow(pg_db: RealDatabase, dest: sqlite3.Connection) -> None:
    other = sqlite3.connect(
        dest.execute("PRAGMA database_list").fetchone()[2], isolation_level=None, timeout=0, check_same_thread=False
    )
    wrote: list[float] = []
    stop = threading.Event()

    def writer() -> None:  # another writer, which never waits: it only gets in between commits
        while not stop.is_set():
            try:
                other.execute("BEGIN IMMEDIATE")
                other.execute("COMMIT")
                wrote.append(time.monotonic())
            except sqlite3.OperationalError:
                pass
            time.sleep(0.02)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    began = time.monotonic()
    slow = "SELECT g, (SELECT g FROM pg_sleep(0.2 + g * 0)) FROM generate_series(1, 8) g"  # a block of 2: 0.4 s
    written, _ = _piped(pg_db, dest, slow, fetch=2, commit=10**6)
    ended = time.monotonic()
    stop.set()
    thread.join()
    other.close()

    assert written == 8
    assert sum(began + 0.5 < at < ended - 0.1 for at in wrote) >= 5, "the lock was held while the source was read"


def test_a_source_error_mid_stream_stops_the_fetcher_and_keeps_no_half_block(
    pg_db: RealDatabase, dest: sqlite3.Connection
) -> None:
    with pytest.raises(psycopg2.DataError, match="division by zero"):
        _piped(pg_db, dest, "SELECT g, 100 / (500 - g) FROM generate_series(1, 1000) g", fetch=10, commit=10**6)

    assert not dest.in_transaction
    count, top = dest.execute("SELECT count(*), coalesce(max(id), 0) FROM t").fetchone()
    assert count == top and count % 10 == 0 and count < 500, "only whole committed blocks before the error"
    assert not _fetchers_alive()


def test_a_destination_error_rolls_back_its_transaction_and_stops_the_fetcher(
    pg_db: RealDatabase, dest: sqlite3.Connection
) -> None:
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        _piped(pg_db, dest, "SELECT g, g FROM generate_series(1, 1000) g", fetch=5, commit=10**6)

    assert not dest.in_transaction
    count, top = dest.execute("SELECT count(*), coalesce(max(id), 0) FROM t").fetchone()
    assert count == top and count % 5 == 0 and count < 13
    time.sleep(0.2)
    assert not _fetchers_alive()


def test_each_block_written_is_shown_once_and_a_refused_block_is_not(
    pg_db: RealDatabase, dest: sqlite3.Connection
) -> None:
    shown: list[list[tuple[int, int]]] = []
    with closing(psycopg2.connect(dbname=pg_db.name, **PG_ADMIN)) as src:
        rows = src.cursor(name="snaprepl_pipe")
        rows.execute("SELECT g, g * 2 FROM generate_series(1, 100) g")
        with closing(fetch_ahead(7, 2)(rows)) as fetched:
            assert block_writer(INSERT, 30, shown.append)(dest, fetched) == 100
    assert sorted(row for block in shown for row in block) == [(g, g * 2) for g in range(1, 101)]

    shown.clear()
    with closing(psycopg2.connect(dbname=pg_db.name, **PG_ADMIN)) as src:
        rows = src.cursor(name="snaprepl_pipe")
        rows.execute("SELECT g, g * 2 FROM generate_series(101, 120) g UNION ALL SELECT 121, 13")  # refused by CHECK
        with closing(fetch_ahead(100, 2)(rows)) as fetched, pytest.raises(sqlite3.IntegrityError):
            block_writer(INSERT, 30, shown.append)(dest, fetched)
    assert shown == [], "a block the destination refused was shown"

"""SQLite sessions: a writer takes the write lock at BEGIN (writers queue instead of failing), and a
read opened ``beside_writer`` (a refresh's staged log entries, read while its own apply writes)
takes none, so that writer is not held up meanwhile."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from snaprepl.connections.lookup import ConnectionInfo
from snaprepl.database.sessions import Database


def _database(path: Path) -> Database:
    return Database(ConnectionInfo(conn_id="lite", conn_type="sqlite", host=str(path)))


def _other_writer_begins(path: Path) -> bool:
    """Whether another connection gets the write lock at once."""
    other = sqlite3.connect(path, timeout=0.1, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as err:
        assert "locked" in str(err)
        return False
    finally:
        other.close()
    return True


@pytest.mark.parametrize("beside_writer", [False, True])
def test_a_read_beside_a_writer_takes_no_write_lock(tmp_path: Path, beside_writer: bool) -> None:
    path = tmp_path / "lite.db"
    sqlite3.connect(path).executescript("CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2);").close()
    database = _database(path)
    try:
        with database.session(beside_writer=beside_writer) as session:
            assert sorted(session.fetch_rows("SELECT a FROM t")) == [(1,), (2,)]
            assert _other_writer_begins(path) is beside_writer
        assert _other_writer_begins(path)
    finally:
        database.dispose()

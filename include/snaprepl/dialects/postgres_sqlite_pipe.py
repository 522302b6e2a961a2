"""PostgreSQL to SQLite: the query's rows fetched by psycopg2 and inserted by ``executemany``, block by
block, in a Spark task, without Spark types, Arrow batches or JDBC.

Spark's JDBC path read the rows into Spark, cast them, and wrote them through the SQLite JDBC driver:
8.4 s of a 1,000,000-change refresh whose whole floor (fetch, ``executemany``, upsert) is 4.5 s. Here
a task reads the source through a server-side cursor (whole blocks of rows, never the whole result in
memory) straight into SQLite's ``executemany``, a transaction per block fetched (the write lock is
never held while the source is read: a killed run's driver drops the staging table at once, and
the caller drops it after any failure). The ranges go one after another in one task: SQLite has one
writer.

The values land as the JDBC path stores them: integers as integers, doubles as reals, strings as
text, dates as ``YYYY-MM-DD`` and timestamps as ISO text with six fraction digits (formatted by the
source: ``to_char``), which is what SQLite's date functions and snaprepl's readers take; JSON and
UUIDs as their text. Other types (decimals, booleans, binary, time zones, times) leave the copy to Spark.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

from snaprepl.dialects.model import Chunks, Column
from snaprepl.dialects.postgres_copy import psycopg2_kwargs
from snaprepl.dialects.postgres_pipe import QueryPipe, RangeCopy
from snaprepl.dialects.types import to_generic

#: Generic types that reach SQLite as the JDBC path stores them, with the source expression giving
#: that form ({} is the quoted column).
CARRIED = {
    "smallint": "{}",
    "integer": "{}",
    "bigint": "{}",
    "double precision": "{}",
    # As text: psycopg2 would hand JSON over parsed (text, json, jsonb, xml and uuid are all strings
    # here). Not char(n): its cast would drop the padding Spark's path keeps.
    "varchar(n)": "{}::text",
    "varchar": "{}::text",
    "char(n)": "{}",
    "long varchar": "{}::text",
    "date": "to_char({}::date, 'YYYY-MM-DD')",  # the cast types a NULL of a column the source lost
    "timestamp": "to_char({}::timestamp, 'YYYY-MM-DD HH24:MI:SS.US')",
}
#: Generic types SQLite stores alike (as TEXT, whatever length was declared).
_TEXTS = {"varchar(n)", "varchar", "long varchar"}
#: Rows a server-side cursor fetches at a time.
FETCH_ROWS = 20_000
#: Blocks fetched ahead of the one being written.
AHEAD_BLOCKS = 2
#: Most rows one SQLite transaction of the pipe takes (fetched blocks waiting are joined up to this).
COMMIT_ROWS = 200_000
#: What a failed task's error text starts with, so the driver finds the database's own message.
FAILURE_MARK = "snaprepl SQLite pipe failed: "
_FAILURE = re.compile(re.escape(FAILURE_MARK) + r"([^\n]*)")


class PostgresSqlitePipe(QueryPipe):
    """Streams a query's result from a PostgreSQL database into a table of a SQLite one."""

    failure_pattern = _FAILURE
    parallel_ranges: ClassVar[bool] = False  # one writer
    shows_rows: ClassVar[bool] = True

    def _carries(self, src: Column, dst: Column) -> bool:
        sent, kept = to_generic(src.type_sql, self.source.name), to_generic(dst.type_sql, self.dest.name)
        return sent.name in CARRIED and _kind(sent.name) == _kind(kept.name)

    def _task(
        self,
        query: str,
        source_columns: Sequence[Column],
        ranges: Sequence[str | None],
        target: tuple[str, str, Sequence[Column]],
        chunks: Chunks | None = None,
        seen: Callable[[list[Any]], None] | None = None,
    ) -> tuple[list[str], RangeCopy]:
        schema, table, dest_columns = target
        select = ", ".join(
            CARRIED[to_generic(c.type_sql, self.source.name).name].format(self.source.quote(c.name))
            for c in source_columns
        )
        selects = [f"SELECT {select} FROM ({query}) snaprepl_q{f' WHERE ({r})' if r else ''}" for r in ranges]
        into = ", ".join(self.dest.quote(c.name) for c in dest_columns)
        marks = ", ".join("?" for _ in dest_columns)
        insert = f"INSERT INTO {self.dest.qualified(schema, table)} ({into}) VALUES ({marks})"
        # The file the driver's sessions (the staging table's DDL, the apply) use, wherever the task runs.
        path = os.path.abspath(str(self.dest_conn.sqlalchemy_url().database))
        source_setup, dest_setup = self._setup()
        connect = psycopg2_kwargs(self.source, self.source_conn)
        return selects, sqlite_task(connect, (source_setup, dest_setup), selects, (path, insert), seen)


def sqlite_task(
    source_kwargs: dict[str, Any],
    setup: tuple[list[str], list[str]],
    selects: list[str],
    target: tuple[str, str],
    seen: Callable[[list[Any]], None] | None = None,
) -> RangeCopy:
    """A function inserting the rows of ``selects[i]`` into the SQLite database file and statement
    ``target`` (path, insert) for the index ``i`` it gets; the rows. Made of closures only:
    Spark's Python workers need nothing of snaprepl; the credentials travel in them, never in a log
    or command line."""
    source_setup, dest_setup = setup
    path, insert = target

    blocks, write = fetch_ahead(FETCH_ROWS, AHEAD_BLOCKS), block_writer(insert, COMMIT_ROWS, seen)

    def pipe(select: str) -> int:
        import sqlite3  # noqa: PLC0415  (imported where the Python worker runs this)
        from contextlib import closing  # noqa: PLC0415

        import psycopg2  # noqa: PLC0415

        with closing(psycopg2.connect(**source_kwargs)) as src, closing(sqlite3.connect(path, timeout=60)) as dst:
            src.set_session(readonly=True)  # the snapshot's query must not write
            with src.cursor() as setup_cursor:
                for statement in source_setup:
                    setup_cursor.execute(statement)
            dst.isolation_level = None  # transactions as written here
            for statement in dest_setup:
                dst.execute(statement)
            rows = src.cursor(name="snaprepl_pipe")  # server-side: FETCH_ROWS at a time
            rows.execute(select)
            with closing(blocks(rows)) as fetched:  # closed before the source connection is
                return write(dst, fetched)

    def copy(index: int) -> int:
        import sqlite3  # noqa: PLC0415

        import psycopg2  # noqa: PLC0415

        try:
            return pipe(selects[index])
        except (psycopg2.Error, sqlite3.Error) as err:
            message = (str(err).strip().splitlines() or [""])[0]
            raise RuntimeError(f"{FAILURE_MARK}{type(err).__name__}: {message}") from None

    return copy


def fetch_ahead(fetch_rows: int, ahead_blocks: int) -> Callable[[Any], Iterator[list[Any]]]:
    """A function giving a server-side cursor's blocks of ``fetch_rows``, the next up to
    ``ahead_blocks`` fetched by a thread while the caller writes this one (psycopg2 and sqlite3 both
    let go of the GIL while their server or engine works), and an empty block wherever none is fetched
    yet: the caller commits rather than wait holding the lock. A closure, as :func:`sqlite_task`'s."""
    start = fetcher(fetch_rows, ahead_blocks)

    def blocks(rows: Any) -> Iterator[list[Any]]:
        import contextlib  # noqa: PLC0415
        import queue  # noqa: PLC0415

        ahead, stop, thread = start(rows)
        try:
            while block := ahead.get():
                if isinstance(block, BaseException):
                    raise block
                yield block
                if ahead.empty():
                    yield []
        finally:
            stop.set()
            while thread.is_alive():  # unblock its put
                with contextlib.suppress(queue.Empty):
                    ahead.get(timeout=0.1)

    return blocks


def fetcher(fetch_rows: int, ahead_blocks: int) -> Callable[[Any], tuple[Any, Any, Any]]:
    """A function starting a thread that fetches a server-side cursor's blocks into a queue of
    ``ahead_blocks`` (an empty block last; an error in their place) until its stop event is set; it
    gives the queue, the event and the thread."""

    def start(rows: Any) -> tuple[Any, Any, Any]:
        import queue  # noqa: PLC0415
        import threading  # noqa: PLC0415

        ahead: queue.Queue[Any] = queue.Queue(maxsize=ahead_blocks)
        stop = threading.Event()

        def fetch() -> None:
            try:
                while not stop.is_set():
                    block = rows.fetchmany(fetch_rows)
                    ahead.put(block)
                    if not block:
                        return
            except BaseException as err:  # raised in the writer's thread
                ahead.put(err)

        thread = threading.Thread(target=fetch, name="snaprepl-sqlite-pipe-fetch", daemon=True)
        thread.start()
        return ahead, stop, thread

    return start


def block_writer(
    insert: str, commit_rows: int, seen: Callable[[list[Any]], None] | None = None
) -> Callable[[Any, Iterator[list[Any]]], int]:
    """A function inserting blocks of rows with statement ``insert`` into a SQLite connection (a
    closure, as :func:`sqlite_task`'s), each block given to ``seen`` once inserted; the rows inserted."""

    def write(dst: Any, fetched: Iterator[list[Any]]) -> int:
        """Insert the blocks, each transaction as many as are fetched already (up to ``commit_rows``): the
        write lock is never held while waiting for the source (a killed run's driver must be able to
        drop the staging table while this task still runs), and each commit's syncs are paid seldom."""
        written = pending = 0
        try:
            for block in fetched:  # a source error is raised here, as a destination's is below
                if block and not dst.in_transaction:
                    dst.execute("BEGIN IMMEDIATE")
                if block:
                    pending += dst.executemany(insert, block).rowcount
                    if seen is not None:
                        seen(block)
                if dst.in_transaction and (not block or pending >= commit_rows):
                    dst.execute("COMMIT")
                    written, pending = written + pending, 0
            if dst.in_transaction:
                dst.execute("COMMIT")
        except BaseException:
            if dst.in_transaction:
                dst.execute("ROLLBACK")
            raise
        return written + pending

    return write


def _kind(generic: str) -> str:
    """What SQLite keeps of a generic type: the text types are one."""
    return "text" if generic in _TEXTS else generic

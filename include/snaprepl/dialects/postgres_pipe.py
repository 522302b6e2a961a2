"""PostgreSQL to PostgreSQL: ``COPY ... TO STDOUT`` piped into ``COPY ... FROM STDIN``, one key range a task.

A complete refresh between two PostgreSQL databases whose columns have the same types needs no Spark
types, Arrow batches or JDBC at all: each Spark task opens psycopg (3) connections to both sides and
hands the source's ``COPY (SELECT ... WHERE <key range>) TO STDOUT`` to the staging table's
``COPY ... FROM STDIN`` in blocks of whole rows of about :data:`BLOCK_BYTES` (the source sends one
message a row; passing each on alone took 1.5 times as long, in the task and in the destination),
never holding more than a block in memory. Each range is loaded in one destination transaction;
the caller drops the staging table if any range fails.

Both ends use the text format (what ``psql COPY | psql COPY`` uses): the binary format carries type
OIDs inside arrays and composite values, which differ between databases for user-defined types. The
text forms are pinned on both sessions (ISO dates, full float precision, hex bytea, UTF-8), so what
the source prints the destination reads back as the same value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, ClassVar

from snaprepl.common import timeouts
from snaprepl.dialects.model import BulkConnection, Chunks, Column
from snaprepl.dialects.postgres_copy import psycopg2_kwargs

if TYPE_CHECKING:
    from snaprepl.dialects.base import Dialect

#: Session settings that fix the text form of every value on both ends of the pipe.
TEXT_FORMS = (
    "SET client_encoding = 'UTF8'",
    "SET DateStyle = 'ISO, MDY'",
    "SET IntervalStyle = 'postgres'",
    "SET extra_float_digits = 3",
    "SET bytea_output = 'hex'",
    "SET lc_monetary = 'C'",
)
#: Bytes of whole rows gathered before they are written to the destination in one message.
BLOCK_BYTES = 128 * 1024
#: What a failed task's error text starts with, so the driver finds the database's own message.
FAILURE_MARK = "snaprepl COPY pipe failed: "
_FAILURE = re.compile(re.escape(FAILURE_MARK) + r"([^\n]*)")
_COLLATE = re.compile(r"\s+COLLATE\s+.*$", re.IGNORECASE | re.DOTALL)
#: Copies range ``i`` of a pipe (the index it is given); the rows copied.
RangeCopy = Callable[[int], int]


def comparable_type(type_sql: str) -> str:
    """A column type as the text format sees it: collations sort, they do not change values."""
    return _COLLATE.sub("", type_sql).strip().lower()


class QueryPipe:
    """What every pipe from a PostgreSQL source shares: its two ends, the refusal by column, the Spark
    job of one task a key range, and the database's message found in a failed task's error. A pipe
    says which columns it carries (:meth:`_carries`), what else may refuse it
    (:meth:`_server_refusal`), and builds its statements and task (:meth:`_task`)."""

    #: Finds the message a failed task of this pipe reported (after its failure mark).
    failure_pattern: re.Pattern[str] = _FAILURE
    #: Whether the ranges load in parallel tasks (else one task loads them one after another).
    parallel_ranges: ClassVar[bool] = True
    #: Whether the pipe commits a range in :class:`~snaprepl.dialects.model.Chunks` when asked.
    chunked: ClassVar[bool] = False
    #: Whether the pipe's rows pass through Python values, so it can show them (``seen``).
    shows_rows: ClassVar[bool] = False

    def __init__(self, source: Dialect, source_conn: BulkConnection, dest: Dialect, dest_conn: BulkConnection) -> None:
        self.source, self.dest = source, dest
        self.source_conn, self.dest_conn = source_conn, dest_conn

    def refusal(self, source_columns: Sequence[Column], dest_columns: Sequence[Column]) -> str | None:
        """Why this pipe cannot load ``dest_columns`` from ``source_columns`` (matched by position), or None."""
        for src, dst in zip(source_columns, dest_columns, strict=True):
            if not self._carries(src, dst):
                return f"column {dst.name} is {dst.type_sql} in the destination but {src.type_sql} in the query"
        return self._server_refusal()

    def _carries(self, src: Column, dst: Column) -> bool:
        """Whether source column ``src`` reaches destination column ``dst`` as the same value."""
        raise NotImplementedError

    def _server_refusal(self) -> str | None:
        """Why the destination's server refuses this pipe, or None."""
        return None

    def __call__(
        self,
        spark: Any,
        query: str,
        source_columns: Sequence[Column],
        ranges: Sequence[str | None],
        target: tuple[str, str, Sequence[Column]],
        chunks: Chunks | None = None,
        seen: Callable[[list[Any]], None] | None = None,
    ) -> int:
        """Copy the rows of ``query`` in each key range (a WHERE condition on its result, None for all
        rows) into ``target`` (schema, table, columns), one Spark task a range (one thread of this
        process each when ``spark`` is None); the rows copied: each range in one transaction, or in
        ``chunks`` (when :attr:`chunked`; a check of each, in this process only).

        :raises Exception: Spark's, carrying the database's message when a range fails (see :meth:`failure`).
        """
        if chunks is not None and not self.chunked:
            raise ValueError(f"{type(self).__name__} loads each range in one transaction")
        if spark is not None and chunks is not None and chunks.check is not None:
            raise ValueError("a Spark task cannot call back this process before its commits")
        if seen is not None and (spark is not None or not self.shows_rows):
            raise ValueError(f"{type(self).__name__} shows its rows only when it runs in this process")
        copies_out, copy = self._task(query, source_columns, ranges, target, chunks, seen)
        if spark is None:
            return in_threads(copy, len(copies_out), len(copies_out) if self.parallel_ranges else 1)
        from pyspark.sql.types import LongType, StructField, StructType

        # spark.range gives each task exactly one range index (DataFrame API: Spark Connect has it too).
        # Each task's count comes back as it is (one stage; a sum in Spark would add a shuffle), under
        # a schema given as a type (as text, a Spark Connect server would be asked to parse it).
        indexes = spark.range(0, len(copies_out), 1, len(copies_out) if self.parallel_ranges else 1)
        counts = indexes.mapInArrow(arrow_task(copy), StructType([StructField("rows", LongType())])).collect()
        return sum(int(row[0]) for row in counts)

    def _task(
        self,
        query: str,
        source_columns: Sequence[Column],
        ranges: Sequence[str | None],
        target: tuple[str, str, Sequence[Column]],
        chunks: Chunks | None = None,
        seen: Callable[[list[Any]], None] | None = None,
    ) -> tuple[list[str], RangeCopy]:
        """The source's ``COPY ... TO STDOUT`` of each range, and the function piping range ``i``."""
        raise NotImplementedError

    def _setup(self) -> tuple[list[str], list[str]]:
        """The statements each task's source and destination sessions run first: the text forms on
        the source, and the lock and statement timeouts every session of a refresh gets."""
        limits = timeouts.current()
        return (
            [*TEXT_FORMS, *self.source.session_setup_sql(limits.lock_seconds, limits.statement_seconds)],
            list(self.dest.session_setup_sql(limits.lock_seconds, limits.statement_seconds)),
        )

    def failure(self, err: BaseException) -> str | None:
        """The database's message a failed pipe task reported, found in the error Spark raised, or None."""
        found = self.failure_pattern.search(str(err))
        return found.group(1).strip() if found else None


class PostgresCopyPipe(QueryPipe):
    """Streams a query's result from one PostgreSQL database into a table of another (or the same)."""

    chunked: ClassVar[bool] = True

    def _carries(self, src: Column, dst: Column) -> bool:
        return comparable_type(src.type_sql) == comparable_type(dst.type_sql)

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
        select = ", ".join(self.source.quote(c.name) for c in source_columns)
        copies_out = [
            f"COPY (SELECT {select} FROM ({query}) snaprepl_q{f' WHERE ({r})' if r else ''}) TO STDOUT" for r in ranges
        ]
        into = ", ".join(self.dest.quote(c.name) for c in dest_columns)
        copy_in = f"COPY {self.dest.qualified(schema, table)} ({into}) FROM STDIN"
        source_setup, dest_setup = self._setup()
        unflushed = ["SET synchronous_commit = off"] if chunks else []  # the caller flushes them
        task = pipe_task(
            (psycopg2_kwargs(self.source, self.source_conn), psycopg2_kwargs(self.dest, self.dest_conn)),
            (source_setup, [*TEXT_FORMS, *dest_setup, *unflushed]),
            copies_out,
            copy_in,
            commits=(chunks.rows, chunks.check) if chunks else None,
        )
        return copies_out, task


def pipe_task(
    connect: tuple[dict[str, Any], dict[str, Any]],
    setup: tuple[list[str], list[str]],
    copies_out: list[str],
    copy_in: str,
    block_bytes: int = BLOCK_BYTES,
    commits: tuple[int, Callable[[int], None] | None] | None = None,
) -> RangeCopy:
    """A function piping ``copies_out[i]`` into ``copy_in`` for the index ``i`` it gets (the rows), with
    connections made from ``connect`` (source's, destination's arguments) and set up by ``setup``,
    rows passed on in blocks of about ``block_bytes``, in one destination transaction per range or,
    with ``commits`` (rows, check), one per that many rows (one ``COPY FROM`` each, ``check`` called
    with its rows before it ends, when given; see :class:`~snaprepl.dialects.model.Chunks`).

    Self-contained (Spark's Python workers need nothing of snaprepl; :func:`arrow_task` makes it a
    task); the credentials travel in its closure, as with
    :func:`snaprepl.dialects.postgres_copy.copy_writer`, never in a log or command line.
    """
    source_kwargs, dest_kwargs = connect
    source_setup, dest_setup = setup
    commit_rows, check = commits or (None, None)
    relay = block_relay(block_bytes)

    def pipe(copy_out: str) -> int:
        import psycopg  # noqa: PLC0415  (imported where the Python worker runs this)

        with psycopg.connect(**source_kwargs) as src, psycopg.connect(**dest_kwargs) as dst:
            src.execute("SET TRANSACTION READ ONLY")  # the snapshot's query must not write
            for statement in source_setup:
                src.execute(statement)
            # Chunks: each COPY FROM its own transaction, without a BEGIN and a COMMIT to wait for.
            dst.autocommit = bool(commit_rows)
            for statement in dest_setup:
                dst.execute(statement)
            copied, ended = 0, False
            with src.cursor() as out_cursor, dst.cursor() as in_cursor, out_cursor.copy(copy_out) as out:
                rows = iter(out)
                while not ended:
                    with in_cursor.copy(copy_in) as into:
                        written = relay(rows, into, commit_rows)
                        if check is not None:
                            check(written)  # raising ends the COPY with an error: nothing committed
                    ended = not commit_rows or written < commit_rows
                    copied += int(in_cursor.rowcount)
            return copied  # one range in one transaction: committed as the connection's block ends

    def copy(index: int) -> int:
        import psycopg  # noqa: PLC0415

        try:
            return pipe(copies_out[index])
        except psycopg.Error as err:
            message = (str(err).strip().splitlines() or [""])[0]
            raise RuntimeError(f"{FAILURE_MARK}{type(err).__name__}: {message}") from None

    return copy


def arrow_task(copy: RangeCopy) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """A ``mapInArrow`` function running ``copy`` for every range index it gets, giving one row: the
    rows copied. A closure, as the copiers are (pyarrow is imported by the Spark worker only: in this
    process it would import pandas, a quarter of a second of a refresh's pipe)."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa  # noqa: PLC0415

        rows = 0
        for batch in batches:
            for index in batch.column(0).to_pylist():
                rows += copy(index)
        yield pa.RecordBatch.from_pydict({"rows": [rows]})

    return run


def in_threads(copy: RangeCopy, count: int, threads: int | None = None) -> int:
    """Run the pipe's ``copy`` for the indexes ``0..count-1`` here, in ``threads`` threads (default:
    one each; psycopg waits for the databases without the GIL); the rows copied. Every range runs to
    its end before a failure is raised (the first, as a Spark job's would be)."""
    with ThreadPoolExecutor(max_workers=threads or count, thread_name_prefix="snaprepl-pipe") as pool:
        futures = [pool.submit(copy, index) for index in range(count)]
    return sum(f.result() for f in futures)


def block_relay(block_bytes: int) -> Callable[[Any, Any, int | None], int]:
    """A function writing the rows a COPY TO gives (one message each) to a COPY FROM in blocks of
    about ``block_bytes``, at most ``limit`` rows of them when given; the rows written (fewer than
    ``limit``: the rows ended). A closure, so Spark's Python workers need nothing of snaprepl to run it."""

    def relay(out: Any, into: Any, limit: int | None = None) -> int:
        block = bytearray()
        written = 0
        for row in out:
            block += row
            if len(block) >= block_bytes:
                into.write(block)
                block = bytearray()
            written += 1
            if written == limit:
                break
        if block:
            into.write(block)
        return written

    return relay

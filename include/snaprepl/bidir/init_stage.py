"""The copy step of REPL_INIT_SNAPSHOT: the publisher's rows into a staging table on the subscriber,
each row numbered with the commit (chunk of at most ``rows_per_commit`` rows) that will apply it.

Between two PostgreSQL databases whose columns have the same types, the rows go through the COPY pipe
(:mod:`snaprepl.dialects.postgres_pipe`: ``COPY TO`` piped into ``COPY FROM`` per key range inside
Spark tasks) and the staging table numbers them itself as they arrive; otherwise Spark reads them
through JDBC, numbers them, and the subscriber's writer loads them.

An empty replica needs no staging table where the pipe commits in chunks (:meth:`InitCopy.straight_into`):
the rows are copied into it, ``rows_per_commit`` at a time, with their ROWGUIDs, which the replica's
triggers let pass. A row already there (a user's insert since the replica was found empty) stops it
(:class:`AlreadyThere`): the caller then stages and merges, as it does for a replica with rows.
"""

from __future__ import annotations

import threading
from typing import Any

from snaprepl.bidir.init_loop import LOOP_ROWS
from snaprepl.bidir.sides import Side
from snaprepl.bidir.state import PublicationState
from snaprepl.catalog.run_lock import check_leases
from snaprepl.dialects import Column
from snaprepl.dialects.model import BulkPipe, Chunks
from snaprepl.dialects.types import GenericType, render
from snaprepl.errors import ReplicationError
from snaprepl.spark import partitioning

CHUNK = "SNAPREPL_CHUNK"
#: How the rows were copied, for the load's notes.
BY_PIPE, BY_SPARK = "the COPY pipe", "Spark"


class AlreadyThere(Exception):
    """A row copied straight into the replica was there already (its key taken meanwhile)."""


class InitCopy:
    """The publisher's rows, their estimated number, and how to read them in parallel key ranges."""

    def __init__(self, state: PublicationState, max_partitions: int) -> None:
        self.state = state
        publisher = state.publisher
        names = [c.name for c in publisher.columns]
        self.query = f"SELECT {', '.join(publisher.dialect.quote(n) for n in names)} FROM {publisher.table}"
        key_columns = [c for c in publisher.columns if c.name in publisher.key]
        with publisher.db.session() as session:
            self.estimate = publisher.dialect.estimate_rows(session, publisher.log.snl_schema, publisher.log.snl_table)
            self.plan = partitioning.plan(
                session, publisher.dialect, self.query, key_columns, self.estimate, max_partitions
            )

    def into(self, sub: Side, stage: str, rows_per_commit: int) -> str:
        """Create the staging table ``stage`` on ``sub`` and copy the rows into it; how they were copied."""
        sd, schema = sub.dialect, sub.log.snl_schema
        columns = self._columns(sub)
        staged = [*columns, Column(CHUNK, render(GenericType("bigint"), sd.name))]
        with sub.db.session() as session:
            session.execute(sd.drop_table_sql(schema, stage))
            session.execute(sd.create_scratch_table_sql(schema, stage, staged))
            numbering = sd.numbered_chunks_sql(schema, stage, CHUNK, rows_per_commit)
            pipe = self._pipe(sub, columns) if numbering else None
            for statement in numbering if pipe else []:
                session.execute(statement)
        if pipe is not None:
            self._pipe_copy(pipe, (schema, stage, columns))
            return BY_PIPE
        frame = self.state.publisher.io.read(self.state.spark, self.query, self.state.publisher.columns, self.plan)
        sub.io.write(_numbered(frame, rows_per_commit), schema, stage, staged)
        return BY_SPARK

    def straight_into(self, sub: Side, rows_per_commit: int) -> int | None:
        """Copy the rows into ``sub``'s replica (empty), committing every ``rows_per_commit`` rows of each
        key range, a thread of this process each; the rows copied, or None (nothing done) when the pipe
        cannot.

        :raises AlreadyThere: a row's key was in the replica (the rows committed before stay)."""
        columns = self._columns(sub)
        pipe = self._pipe(sub, columns)
        if pipe is None or not pipe.chunked:
            return None
        ranges = partitioning.key_ranges(self.state.publisher.dialect, self.plan)
        target = (sub.log.snl_schema, sub.log.snl_table, columns)
        try:
            # Here, a thread a key range: no Spark session to start, no Python workers for its tasks.
            chunks = Chunks(rows_per_commit, LeaseChecks().before_commit)
            copied = pipe(None, self.query, self.state.publisher.columns, ranges, target, chunks)
        except Exception as err:
            cause = pipe.failure(err)
            if cause is None:
                raise
            if sub.dialect.duplicate_key(cause):
                raise AlreadyThere(cause) from err
            raise _failed(cause) from err
        with sub.db.session() as session:  # the chunks' commits did not wait for the disk
            for statement in sub.dialect.flushing_commit_sql():
                session.execute(statement)
        return copied

    def _columns(self, sub: Side) -> list[Column]:
        """The subscriber's columns in the publisher's order."""
        by_name = {c.name: c for c in sub.columns}
        return [Column(c.name, by_name[c.name].type_sql) for c in self.state.publisher.columns]

    def _pipe(self, sub: Side, columns: list[Column]) -> BulkPipe | None:
        publisher = self.state.publisher
        pipe: BulkPipe | None = publisher.dialect.bulk_pipe(publisher.io.conn, sub.dialect, sub.io.conn)
        if pipe is None or pipe.refusal(publisher.columns, columns):
            return None
        return pipe

    def _pipe_copy(self, pipe: BulkPipe, target: tuple[str, str, list[Column]]) -> None:
        ranges = partitioning.key_ranges(self.state.publisher.dialect, self.plan)
        try:
            pipe(self.state.spark, self.query, self.state.publisher.columns, ranges, target)
        except Exception as err:
            cause = pipe.failure(err)
            if cause is None:
                raise
            raise _failed(cause) from err


class LeaseChecks:
    """Checks, before chunks commit, that this run still holds its leases (a run taken over, thought
    dead, commits nothing more): once every about LOOP_ROWS rows the copy's threads commit together,
    as the staged apply's loop checks once a statement."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._unchecked = 0

    def before_commit(self, rows: int) -> None:
        with self._lock:
            self._unchecked += rows
            due = self._unchecked >= LOOP_ROWS
            if due:
                self._unchecked = 0
        if due:
            check_leases()


def _failed(cause: str) -> ReplicationError:
    """The error of a copy that failed with the database's message ``cause``."""
    return ReplicationError(
        f"the initial load failed while copying: {cause}",
        "the replica keeps what it had; fix the cause and run REPL_INIT_SNAPSHOT again",
    )


def _numbered(frame: Any, rows_per_commit: int) -> Any:
    """``frame`` with a CHUNK column numbering commits of ``rows_per_commit`` rows, without a shuffle
    (the high bits of Spark's row id are the partition)."""
    from pyspark.sql import functions as F

    row_id = F.monotonically_increasing_id()
    chunk = F.shiftright(row_id, 33) * F.lit(10**9) + F.floor(
        row_id.bitwiseAND(F.lit((1 << 33) - 1)) / F.lit(rows_per_commit)
    )
    return frame.withColumn(CHUNK, chunk.cast("long"))

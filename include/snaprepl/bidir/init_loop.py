"""The chunked apply of an initial load run inside the subscriber's database where its dialect can
(:meth:`~snaprepl.dialects.bidir_sets.BidirSets.chunk_loop_sql`): one statement commits a run of
chunks, so a load of a million rows at 100 rows per commit makes a few dozen round trips, not ten
thousand. The run holding the load's leases is checked before each statement."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from snaprepl.bidir.sides import Side
from snaprepl.catalog.run_lock import check_leases
from snaprepl.common.progress import Progress

#: About how many rows one statement commits (in chunks of rows_per_commit): a killed or taken-over
#: load commits at most this many more rows than its last lease check allowed.
LOOP_ROWS = 20_000


def apply_in_loops(
    sub: Side, chunks: Sequence[tuple[Any, int]], setup: Sequence[str], merge: Sequence[str], progress: Progress
) -> bool:
    """Commit ``chunks`` of the staging table in runs of about LOOP_ROWS rows, each one statement;
    False (nothing done) when ``sub``'s dialect or connection cannot."""
    if sub.db.conn.conn_type == "jdbc" or sub.dialect.chunk_loop_sql(setup, merge, [0]) is None:
        return False
    for run in _runs(chunks):
        check_leases()  # a run taken over (thought dead) commits nothing more
        statements = sub.dialect.chunk_loop_sql(setup, merge, [int(number) for number, _ in run]) or []
        with sub.db.engine().connect() as connection:
            # COMMIT inside a statement needs it outside a transaction block.
            autocommit = connection.execution_options(isolation_level="AUTOCOMMIT")
            for statement in statements:
                autocommit.exec_driver_sql(statement)
        progress.advance(sum(rows for _, rows in run))
    return True


def _runs(chunks: Sequence[tuple[Any, int]]) -> Iterator[list[tuple[Any, int]]]:
    run: list[tuple[Any, int]] = []
    rows = 0
    for chunk in chunks:
        run.append(chunk)
        rows += chunk[1]
        if rows >= LOOP_ROWS:
            yield run
            run, rows = [], 0
    if run:
        yield run

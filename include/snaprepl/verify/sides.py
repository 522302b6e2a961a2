"""The two sides of a verify: what is read from the source (the snapshot's query, as a complete
refresh reads it) and from the copy, in which column order and key ranges."""

from __future__ import annotations

from dataclasses import dataclass

from snaprepl.catalog.records import LogRecord
from snaprepl.dialects import Column
from snaprepl.dialects.base import SqlSession
from snaprepl.errors import InvalidArgument, RefreshFailed
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.spark import partitioning
from snaprepl.spark.io import Partitioning, SparkJdbc


@dataclass(frozen=True)
class Side:
    """One side's read: its query, its columns (in the copy's order) and its key ranges."""

    io: SparkJdbc
    query: str
    columns: list[Column]
    plan: Partitioning | None
    estimate: int | None


@dataclass(frozen=True)
class Sides:
    source: Side
    dest: Side
    dest_columns: list[Column]
    key: list[str]

    @property
    def estimate(self) -> int:
        return max(self.source.estimate or 0, self.dest.estimate or 0)


def plan_sides(ends: Endpoints, log: LogRecord | None, where: str | None, max_partitions: int) -> Sides:
    """Both reads of a verify of ``ends``' snapshot, limited by ``where`` on both sides.

    :raises InvalidArgument: ``where`` is not a valid condition on either side.
    """
    snapshot, source, dest = ends.snapshot, ends.source_db.dialect, ends.dest_db.dialect
    dest_info = ends.dest_table()
    kept = snapshot.column_changes.get("kept", [])  # dropped at the source, kept: not compared
    dest_columns = [c for c in dest_info.columns if c.name not in kept]
    key = [c.name for c in dest_info.primary_key]
    column_list = ", ".join(dest.quote(c.name) for c in dest_columns)
    dest_query = _limited(
        f"SELECT {column_list} FROM {dest.qualified(snapshot.sn_dest_schema, snapshot.sn_dest_table)}", where
    )
    source_query = _limited(snapshot.sn_query, where)
    with ends.dest_db.session(read_only=True) as session:
        _check_where(session, dest_query, where, "copy")
        dest_estimate = dest.estimate_rows(session, snapshot.sn_dest_schema, snapshot.sn_dest_table)
        dest_key = [c for c in dest_columns if c.name in key]
        dest_plan = partitioning.plan(session, dest, dest_query, dest_key, dest_estimate, max_partitions)
    with ends.source_db.session() as session:  # describing may create a temporary view
        source_columns = _matched(ends, source.describe_query(session, snapshot.sn_query), dest_columns)
    with ends.source_db.session(read_only=True) as session:  # the condition's own SQL: it must not write
        _check_where(session, source_query, where, "source")
        source_key = [c for c in source_columns if any(dest.same_name(c.name, k) for k in key)]
        estimate = source.estimate_rows(session, log.snl_schema, log.snl_table) if log else dest_estimate
        source_plan = partitioning.plan(session, source, source_query, source_key, estimate, max_partitions)
    return Sides(
        Side(SparkJdbc(ends.source_io.conn, read_only=True), source_query, source_columns, source_plan, estimate),
        Side(SparkJdbc(ends.dest_io.conn, read_only=True), dest_query, dest_columns, dest_plan, dest_estimate),
        dest_columns,
        key,
    )


def _limited(query: str, where: str | None) -> str:
    return f"SELECT * FROM ({query}) snaprepl_v WHERE {where}" if where else query


def _check_where(session: SqlSession, query: str, where: str | None, side: str) -> None:
    """Refuse a condition the side's database does not accept (found before anything is read)."""
    if not where:
        return
    try:
        session.query(f"SELECT * FROM ({query}) snaprepl_w WHERE 1 = 0")
    except Exception as err:
        cause = (str(getattr(err, "orig", None) or err).strip().splitlines() or ["?"])[0]
        raise InvalidArgument(
            f"the condition {where!r} is not valid on the {side}: {cause}",
            "write a WHERE condition on the snapshot's columns that both databases accept",
        ) from None


def _matched(ends: Endpoints, result_columns: list[Column], dest_columns: list[Column]) -> list[Column]:
    """The query's result columns in the order of the copy's, matched by name."""
    dest = ends.dest_db.dialect
    by_name = {c.name: c for c in result_columns}
    missing = [c.name for c in dest_columns if not any(dest.same_name(c.name, n) for n in by_name)]
    if missing:
        raise RefreshFailed(
            f"the query of snapshot {ends.snapshot.sn_name} no longer returns columns {', '.join(missing)} of its copy",
            "restore them in the source, or drop and recreate the snapshot",
        )
    return [next(by_name[n] for n in by_name if dest.same_name(c.name, n)) for c in dest_columns]

"""A verify's cheapest path: each database computes its side's count and hash sum per bucket itself
(:mod:`snaprepl.dialects.checksums`), both at once, and only the sums travel. Used when the two
sides are the same dialect and every column has the same type on both, so that the same SQL gives
the same text for equal values; otherwise (and whenever the sums differ) the comparison runs in Spark,
which names the differences."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

from snaprepl.database.sessions import Database
from snaprepl.dialects.types import to_generic
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.verify.sides import Sides

Sums = dict[int, tuple[int, Decimal]]


def database_sums(ends: Endpoints, sides: Sides, buckets: int) -> tuple[bool, int] | None:
    """(whether every bucket agrees, the source's rows), or None when the databases cannot tell."""
    source, dest = ends.source_db.dialect, ends.dest_db.dialect
    if source.name != dest.name:
        return None
    types = zip(sides.source.columns, sides.dest_columns, strict=True)
    if any(to_generic(s.type_sql, source.name) != to_generic(d.type_sql, dest.name) for s, d in types):
        return None
    key_order = [sides.source.columns[[c.name for c in sides.dest_columns].index(k)].name for k in sides.key]
    source_sql = source.bucket_sums_sql(sides.source.query, [c.name for c in sides.source.columns], key_order, buckets)
    dest_sql = dest.bucket_sums_sql(sides.dest.query, [c.name for c in sides.dest_columns], sides.key, buckets)
    if source_sql is None or dest_sql is None:
        return None
    with ThreadPoolExecutor(max_workers=2) as pool:
        source_sums = pool.submit(_sums, ends.source_db, source_sql)
        dest_sums = pool.submit(_sums, ends.dest_db, dest_sql)
        ours, theirs = source_sums.result(), dest_sums.result()
    return ours == theirs, sum(rows for rows, _ in ours.values())


def _sums(database: Database, sql: str) -> Sums:
    with database.session(read_only=True) as session:
        return {int(b): (int(rows), Decimal(total or 0)) for b, rows, total in session.query(sql)}

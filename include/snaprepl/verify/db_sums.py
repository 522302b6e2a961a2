"""A verify's cheapest path: each database computes its side's count and hash sum per bucket itself
(:mod:`snaprepl.dialects.checksums`), both at once, and only the sums travel. Used when the two
sides are the same dialect and every column has the same type on both, so that the same SQL gives
the same text for equal values; otherwise the comparison runs in Spark, which names the differences."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

from snaprepl.database.sessions import Database
from snaprepl.dialects.types import to_generic
from snaprepl.verify.ranges import KeyRanges, RangeSums, Span, differing, merged
from snaprepl.verify.sides import Sides

Sums = dict[int, tuple[int, Decimal]]


class DatabaseSums:
    """Both databases' sums of one verify; :meth:`of` says whether the databases can compute them."""

    def __init__(self, source_db: Database, dest_db: Database, sides: Sides) -> None:
        self.source_db, self.dest_db, self.sides = source_db, dest_db, sides
        self.queries = 0  # pairs of sums queries run

    @classmethod
    def of(cls, source_db: Database, dest_db: Database, sides: Sides) -> DatabaseSums | None:
        """The sums of ``sides``, or None when the databases cannot compute comparable ones."""
        source, dest = source_db.dialect, dest_db.dialect
        if source.name != dest.name or source.row_digest(sides.source.columns) is None:
            return None
        types = zip(sides.source.columns, sides.dest_columns, strict=True)
        if any(to_generic(s.type_sql, source.name) != to_generic(d.type_sql, dest.name) for s, d in types):
            return None
        for database in (source_db, dest_db):  # both must compute the same digest
            with database.session(read_only=True) as session:
                if not database.dialect.checksums_usable(session):
                    return None
        return cls(source_db, dest_db, sides)

    def hashed(self, buckets: int) -> tuple[bool, int]:
        """(whether every hash bucket of the key agrees, the source's rows)."""
        sides = self.sides
        key_order = [sides.source.columns[[c.name for c in sides.dest_columns].index(k)].name for k in sides.key]
        source_sql = self.source_db.dialect.bucket_sums_sql(
            sides.source.query, sides.source.columns, key_order, buckets
        )
        dest_sql = self.dest_db.dialect.bucket_sums_sql(sides.dest.query, sides.dest_columns, sides.key, buckets)
        ours, theirs = self._both(source_sql or "", dest_sql or "")
        return ours == theirs, sum(int(row[0]) for row in ours.values())

    def ranges(self, ranges: KeyRanges, bucket: tuple[int, int], spans: Sequence[Span]) -> tuple[list[Span], int]:
        """The differing spans among the range buckets (``bucket``: lower, width) of the keys of
        ``spans`` (none: all of them), and the source's rows counted."""
        sides = self.sides
        within = merged(spans)
        source_sql = self.source_db.dialect.range_sums_sql(
            sides.source.query, sides.source.columns, ranges.source_column, bucket, within
        )
        dest_sql = self.dest_db.dialect.range_sums_sql(
            sides.dest.query, sides.dest_columns, ranges.dest_column, bucket, within
        )
        ours, theirs = self._both(source_sql or "", dest_sql or "")
        return differing(ours, theirs), sum(int(row[0]) for row in ours.values())

    def _both(self, source_sql: str, dest_sql: str) -> tuple[RangeSums, RangeSums]:
        self.queries += 1
        with ThreadPoolExecutor(max_workers=2) as pool:
            ours = pool.submit(_sums, self.source_db, source_sql)
            theirs = pool.submit(_sums, self.dest_db, dest_sql)
            return ours.result(), theirs.result()


def _sums(database: Database, sql: str) -> RangeSums:
    """bucket -> (rows, hash sum[, smallest key, largest key])."""
    with database.session(read_only=True) as session:
        return {
            int(row[0]): (int(row[1]), Decimal(row[2] or 0), *(int(v) for v in row[3:]))  # type: ignore[misc]
            for row in session.query(sql)
        }

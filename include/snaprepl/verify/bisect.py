"""Finding where a copy differs, cheap when it is equal and reading little when it is not.

The first pass reduces each side to a count and a hash sum per bucket (in both databases when they
can, :class:`.db_sums.DatabaseSums`, else in Spark, :class:`.compare.Comparison`). Buckets that are
key ranges (:mod:`.ranges`) and differ are then bisected, as data-diff does: every range holding
more than :data:`READ_ROWS` rows on a side is split into at least :data:`PARTS` sub-ranges whose
sums both databases compute (from the key's index, only those ranges: one query per side for all of
them, on a finer grid of the key), and only the sub-ranges that differ are split again, until each
is small enough to read. A one-row difference in millions of rows thus reads a few dozen rows, and
a thousand scattered ones a few dozen each. Without range buckets (a key without an integer first
column) the differing hash buckets are found in Spark, and naming their rows reads both sides again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from snaprepl.verify.compare import Comparison
from snaprepl.verify.db_sums import DatabaseSums
from snaprepl.verify.ranges import KeyRanges, Span

#: A differing range with at most this many rows on either side is read rather than split: an eighth
#: of the first pass's bucket (:func:`.compare.bucket_count`), so that one more pair of sums queries
#: spares Spark reading and hashing the rest of each differing bucket.
READ_ROWS = 32
#: Sub-ranges a differing range is split into.
PARTS = 16


@dataclass(frozen=True)
class Found:
    """Where the sides differ: ``spans`` of keys (range buckets) or ``buckets`` (hash buckets; both
    sides are read again to name their rows); the source's rows; where the sums were computed;
    the rows the narrowing reads (both sides); the pairs of sums queries the bisection ran."""

    spans: list[Span]
    buckets: list[int]
    rows: int
    computed_in: str
    rows_narrowed: int
    sums_queries: int = 0

    @property
    def target(self) -> list[Span] | list[int]:
        return self.spans if self.spans else self.buckets

    @property
    def differing(self) -> int:
        return len(self.spans) + len(self.buckets)


def find(comparison: Comparison, sums: DatabaseSums | None) -> Found:
    """The first pass and, where the buckets are key ranges and the databases compute sums, the
    bisection of the ranges that differ."""
    ranges = comparison.ranges
    if sums is not None and ranges is not None:
        spans, rows = sums.ranges(ranges, (ranges.lower, ranges.width), [])
        spans = bisected(sums, ranges, spans)
        return Found(spans, [], rows, "databases", sum(s.rows for s in spans), sums.queries)
    if sums is not None:
        equal, rows = sums.hashed(comparison.buckets)
        if equal:
            return Found([], [], rows, "databases", 0, sums.queries)
    if ranges is not None:
        spans, rows = comparison.differing_spans()
        return Found(spans, [], rows, "spark", sum(s.rows for s in spans))
    buckets, rows, dest_rows = comparison.differing_buckets()
    return Found([], buckets, rows, "spark", rows + dest_rows if buckets else 0)


def bisected(sums: DatabaseSums, ranges: KeyRanges, spans: list[Span]) -> list[Span]:
    """``spans`` narrowed until each holds at most :data:`READ_ROWS` rows on either side (or one key).

    Each round splits every span still too large on one grid of the key (from the first pass's
    lower bound, a width of a :data:`PARTS`-th of the shortest such span): sub-ranges strictly
    shorter than their span, so the rounds end."""
    todo, done = list(spans), list[Span]()
    while todo:
        large: list[Span] = []
        for span in todo:
            (large if max(span.source_rows, span.dest_rows) > READ_ROWS and span.lo < span.hi else done).append(span)
        if not large:
            break
        width = max(1, math.ceil(min(s.hi - s.lo + 1 for s in large) / PARTS))
        todo = sums.ranges(ranges, (ranges.lower, width), large)[0]
    return sorted(done, key=lambda s: s.lo)

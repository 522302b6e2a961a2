"""Buckets that are key ranges, so that a differing bucket can be read (or split) alone.

When the copy's key starts with an integer column, a verify buckets rows by ranges of that column
instead of by a hash of the key: bucket ``b`` holds the keys ``lower + b * width`` up to the next
bucket's start. Each bucket's sums carry the smallest and largest key it holds on each side, so a
bucket that differs becomes a :class:`Span` of keys that really occur, and the rows of a span are
read with a ``WHERE k BETWEEN lo AND hi`` the database answers from the key's index. A key a
concurrent writer adds outside ``[lower, upper]`` still falls into some bucket on both sides (the
bucket number is the same expression on both), and its span covers it.

Other keys (text, dates, a composite key whose first column is not an integer) keep the hash
buckets of :mod:`.compare`, whose narrowing reads both sides again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from snaprepl.database.sessions import Database
from snaprepl.dialects.types import to_generic
from snaprepl.verify.sides import Sides

_INTEGERS = {"integer", "smallint", "bigint"}


@dataclass(frozen=True)
class KeyRanges:
    """Range buckets of the key's first column: ``dest_column`` in the copy, ``source_column`` in
    the source's query; ``buckets`` buckets of ``width`` keys from ``lower``."""

    dest_column: str
    source_column: str
    lower: int
    width: int
    buckets: int


@dataclass(frozen=True)
class Span:
    """Keys ``lo`` to ``hi`` (both included) of the range column, and the rows they hold on the
    source and on the copy (as the sums counted them)."""

    lo: int
    hi: int
    source_rows: int
    dest_rows: int

    @property
    def rows(self) -> int:
        return self.source_rows + self.dest_rows


def range_column(sides: Sides, source_dialect: str, dest_dialect: str) -> tuple[str, str] | None:
    """(copy's name, source's name) of the key's first column when it is an integer on both sides."""
    names = [c.name for c in sides.dest_columns]
    first = sides.key[0] if sides.key else None
    if first is None or first not in names:
        return None
    index = names.index(first)
    dest, source = sides.dest_columns[index], sides.source.columns[index]
    if to_generic(dest.type_sql, dest_dialect).name not in _INTEGERS:
        return None
    if to_generic(source.type_sql, source_dialect).name not in _INTEGERS:
        return None
    return dest.name, source.name


def plan_ranges(source_db: Database, dest_db: Database, sides: Sides, buckets: int) -> KeyRanges | None:
    """Range buckets for a verify of ``sides`` (None: the key has no integer first column, or both
    sides are empty), ``buckets`` of them over the smallest to largest key of either side."""
    column = range_column(sides, source_db.dialect.name, dest_db.dialect.name)
    if column is None:
        return None
    bounds = [
        _min_max(dest_db, sides.dest.query, column[0]),
        _min_max(source_db, sides.source.query, column[1]),
    ]
    found = [b for b in bounds if b is not None]
    if not found:
        return None
    lower, upper = min(b[0] for b in found), max(b[1] for b in found)
    width = max(1, math.ceil((upper - lower + 1) / max(1, buckets)))
    return KeyRanges(column[0], column[1], lower, width, math.ceil((upper - lower + 1) / width))


def _min_max(database: Database, query: str, column: str) -> tuple[int, int] | None:
    quoted = database.dialect.quote(column)
    with database.session(read_only=True) as session:
        low, high = session.query(f"SELECT MIN({quoted}), MAX({quoted}) FROM ({query}) snaprepl_r")[0]
    return None if low is None else (int(low), int(high))


def merged(spans: Sequence[Span]) -> list[tuple[int, int]]:
    """The key ranges of ``spans``, in order, merged where they touch or overlap."""
    ranges: list[list[int]] = []
    for span in sorted(spans, key=lambda s: s.lo):
        if ranges and span.lo <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], span.hi)
        else:
            ranges.append([span.lo, span.hi])
    return [(lo, hi) for lo, hi in ranges]


def span_condition(quoted_column: str, spans: Sequence[Span]) -> str:
    """A WHERE condition selecting the keys of ``spans`` (merged where they touch)."""
    return " OR ".join(f"({quoted_column} BETWEEN {lo} AND {hi})" for lo, hi in merged(spans))


#: Sums of range buckets: bucket -> (rows, hash sum, smallest key, largest key).
RangeSums = dict[int, tuple[int, Any, int, int]]


def differing(source: RangeSums, dest: RangeSums) -> list[Span]:
    """The spans of the buckets whose rows or hash sums differ between the sides."""
    spans = []
    for bucket in source.keys() | dest.keys():
        ours, theirs = source.get(bucket), dest.get(bucket)
        if ours is not None and theirs is not None and ours[:2] == theirs[:2]:
            continue
        present = [s for s in (ours, theirs) if s is not None]
        spans.append(
            Span(
                min(s[2] for s in present), max(s[3] for s in present),
                ours[0] if ours else 0, theirs[0] if theirs else 0,
            )
        )  # fmt: skip
    return sorted(spans, key=lambda s: s.lo)

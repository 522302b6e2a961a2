"""How a complete refresh splits its read into parallel key ranges.

A single integer key uses Spark's own range partitioning (MIN and MAX come from the source). Other
keys (text, composite) get boundaries from the source itself, every n-th key in key order, and one
row-value range predicate per partition; PostgreSQL, MariaDB and SQLite all compare row values.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from snaprepl.dialects import Column, Dialect
from snaprepl.dialects.base import SqlSession
from snaprepl.dialects.types import to_generic
from snaprepl.spark.io import Partitioning, PredicatePartitioning, RangePartitioning

ROWS_PER_PARTITION = 250_000
_INTEGERS = {"integer", "smallint", "bigint"}


def partition_count(estimated_rows: int | None, max_partitions: int) -> int:
    if not estimated_rows or estimated_rows <= 0:
        return 1
    return max(1, min(max_partitions, math.ceil(estimated_rows / ROWS_PER_PARTITION)))


def plan(
    session: SqlSession,
    dialect: Dialect,
    query: str,
    key: Sequence[Column],
    estimated_rows: int | None,
    max_partitions: int,
) -> Partitioning | None:
    """The partitioning of a read of ``query`` (whose result has the unique ``key``), or None for one read."""
    partitions = partition_count(estimated_rows, max_partitions)
    if not key or partitions <= 1:
        return None
    names = [dialect.quote(c.name) for c in key]
    if len(key) == 1 and to_generic(key[0].type_sql, dialect.name).name in _INTEGERS:
        low, high = session.query(f"SELECT MIN({names[0]}), MAX({names[0]}) FROM ({query}) snaprepl_q")[0]
        if low is None:
            return None
        return RangePartitioning(column=key[0].name, lower=int(low), upper=int(high) + 1, partitions=partitions)
    step = math.ceil((estimated_rows or 0) / partitions)
    key_list = ", ".join(names)
    rows = session.query(
        f"SELECT {key_list} FROM (SELECT {key_list}, ROW_NUMBER() OVER (ORDER BY {key_list}) AS snaprepl_rn "
        f"FROM ({query}) snaprepl_q) snaprepl_n WHERE (snaprepl_rn - 1) % {step} = 0 AND snaprepl_rn > 1 "
        f"ORDER BY {key_list}"
    )
    if not rows:
        return None
    target = f"({key_list})" if len(key) > 1 else key_list

    def value(row: Sequence[object]) -> str:
        literals = ", ".join(dialect.literal_value(v) for v in row)
        return f"({literals})" if len(key) > 1 else literals

    bounds = [value(r) for r in rows]
    predicates = [f"{target} < {bounds[0]}"]
    predicates += [f"{target} >= {lo} AND {target} < {hi}" for lo, hi in itertools.pairwise(bounds)]
    predicates.append(f"{target} >= {bounds[-1]}")
    return PredicatePartitioning(tuple(predicates))


def key_ranges(dialect: Dialect, partitioning: Partitioning | None) -> list[str | None]:
    """``partitioning`` as one WHERE condition per range (None: one range of every row), for readers
    other than Spark's JDBC source; an integer range is split as Spark splits it, in even strides."""
    if partitioning is None:
        return [None]
    if isinstance(partitioning, PredicatePartitioning):
        return list(partitioning.predicates)
    column, count = dialect.quote(partitioning.column), partitioning.partitions
    span = partitioning.upper - partitioning.lower
    bounds = sorted({b for i in range(1, count) if (b := partitioning.lower + span * i // count) > partitioning.lower})
    if not bounds:
        return [None]
    ranges: list[str | None] = [f"{column} < {bounds[0]} OR {column} IS NULL"]
    ranges += [f"{column} >= {lo} AND {column} < {hi}" for lo, hi in itertools.pairwise(bounds)]
    ranges.append(f"{column} >= {bounds[-1]}")
    return ranges

"""Comparing a copy with its source, cheap when they are equal and exact when they are not.

Both sides are read once in the key ranges a complete refresh plans (:mod:`snaprepl.spark.partitioning`),
every row reduced to its canonical key, a hash of its canonical values (:mod:`.canonical`) and a
bucket of the key space (a range of the key's integer first column, :mod:`.ranges`, else a hash of
the key). Each side sends only a count and a sum of hashes per bucket to the driver: when every
bucket agrees the copy is equal, after one read of each side. The rows of the buckets that disagree
are read again on both sides (only their key ranges, when buckets are ranges; else both sides,
keeping those buckets) and joined by key, which names each difference: missing (in the source
only), extra (in the copy only), different.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from snaprepl.spark.io import PredicatePartitioning
from snaprepl.spark.session import session_of
from snaprepl.verify.canonical import BUCKET, HASH, KEY, hashed, quoted
from snaprepl.verify.model import DIFFERENT, EXTRA, MISSING, SAMPLE_SIZE
from snaprepl.verify.ranges import KeyRanges, Span, differing, span_condition
from snaprepl.verify.sides import Side, Sides

KIND = "snaprepl_kind"
SOURCE_ROW = "snaprepl_source_row"
DEST_KEY = "snaprepl_dest_key"
_ROWS_PER_BUCKET = 256
_MAX_BUCKETS = 1 << 16
_READS = 8  # parallel reads of the spans of keys that differ


def bucket_count(estimate: int) -> int:
    """Buckets of the key space: about 256 rows each, so a few scattered differences re-read little."""
    return max(16, min(_MAX_BUCKETS, estimate // _ROWS_PER_BUCKET))


@dataclass
class Comparison:
    """One comparison of both sides; :meth:`differing_buckets` then :meth:`differences`."""

    spark: Any
    sides: Sides
    target_type: Any  # the copy's Spark type of a column (SparkJdbc.target_type)
    dest_dialect: str
    buckets: int
    #: Range buckets of the key's first column (None: hash buckets of the key).
    ranges: KeyRanges | None = None

    def frame(self, side: Side) -> Any:
        """``side``'s rows in the copy's column names and types, hashed and bucketed."""
        read = side.io.read(session_of(self.spark), side.query, side.columns, side.plan)
        named = read.toDF(*[c.name for c in self.sides.dest_columns])
        typed = named.select(
            *(F.col(quoted(c.name)).cast(self.target_type(c)).alias(c.name) for c in self.sides.dest_columns)
        )
        ranges = self.ranges
        bucket: int | Any = self.buckets
        if ranges is not None:
            bucket = F.expr(f"({quoted(ranges.dest_column)} - ({ranges.lower})) div {ranges.width}")
        return hashed(typed, self.sides.dest_columns, self.sides.key, self.target_type, self.dest_dialect, bucket)

    def _sums(self, side: Side) -> Any:
        """Rows and the sum of row hashes per bucket (and each range bucket's smallest and largest key)."""
        frame = self.frame(side)  # first: it starts the job's lazy session, which F.lit() needs in spark-submit
        aggregates = [F.count(F.lit(1)).alias("rows"), F.sum(F.col(HASH).cast("decimal(38,0)")).alias("total")]
        if self.ranges is not None:
            column = F.col(quoted(self.ranges.dest_column))
            aggregates += [F.min(column).alias("lo"), F.max(column).alias("hi")]
        return frame.groupBy(BUCKET).agg(*aggregates)

    def _both_sums(self) -> tuple[dict[int, Any], dict[int, Any]]:
        source = self._sums(self.sides.source).withColumn("side", F.lit(0))
        dest = self._sums(self.sides.dest).withColumn("side", F.lit(1))
        both: tuple[dict[int, Any], dict[int, Any]] = ({}, {})
        for row in source.unionByName(dest).collect():
            limits = (int(row["lo"]), int(row["hi"])) if self.ranges is not None else ()
            both[int(row["side"])][int(row[BUCKET])] = (int(row["rows"]), row["total"], *limits)
        return both

    def differing_buckets(self) -> tuple[list[int], int, int]:
        """The hash buckets whose count or hash sum differ between the sides, and each side's rows."""
        source, dest = self._both_sums()
        differ = sorted(b for b in source.keys() | dest.keys() if source.get(b) != dest.get(b))
        return differ, sum(s[0] for s in source.values()), sum(d[0] for d in dest.values())

    def differing_spans(self) -> tuple[list[Span], int]:
        """The range buckets whose count or hash sum differ, as spans of keys, and the source's rows."""
        source, dest = self._both_sums()
        return differing(source, dest), sum(s[0] for s in source.values())

    def _chosen(self, side: Side, target: list[Span] | list[int]) -> Any:
        """``side``'s hashed rows in ``target``: spans of keys (only they are read) or hash buckets."""
        if target and isinstance(target[0], Span) and self.ranges is not None:
            spans = [s for s in target if isinstance(s, Span)]
            names = [c.name for c in self.sides.dest_columns]
            column = side.columns[names.index(self.ranges.dest_column)].name
            quoted_column = side.io.dialect.quote(column)
            chunks = [spans[i::_READS] for i in range(min(_READS, len(spans)))]
            plan = PredicatePartitioning(tuple(span_condition(quoted_column, chunk) for chunk in chunks))
            return self.frame(dataclasses.replace(side, plan=plan))
        spark = session_of(self.spark)
        chosen = F.broadcast(
            spark.createDataFrame([(b,) for b in target], StructType([StructField(BUCKET, LongType())]))
        )
        return self.frame(side).join(chosen, BUCKET, "left_semi")

    def differences(self, target: list[Span] | list[int]) -> Any:
        """The rows of ``target`` (spans of keys, or hash buckets) that differ: their canonical key,
        kind, the source's row (missing, different) and the copy's key (extra)."""
        names = [c.name for c in self.sides.dest_columns]
        source = self._chosen(self.sides.source, target)
        dest = self._chosen(self.sides.dest, target)
        left = source.select(
            KEY, F.col(HASH).alias("s_hash"), F.struct(*(F.col(quoted(n)) for n in names)).alias(SOURCE_ROW)
        )
        right = dest.select(
            KEY, F.col(HASH).alias("d_hash"), F.struct(*(F.col(quoted(k)) for k in self.sides.key)).alias(DEST_KEY)
        )
        joined = left.join(right, KEY, "full_outer")
        kind = (
            F.when(F.col("d_hash").isNull(), F.lit(MISSING))
            .when(F.col("s_hash").isNull(), F.lit(EXTRA))
            .otherwise(F.lit(DIFFERENT))
        )
        changed = F.col("s_hash").isNull() | F.col("d_hash").isNull() | (F.col("s_hash") != F.col("d_hash"))
        return joined.where(changed).select(KEY, kind.alias(KIND), SOURCE_ROW, DEST_KEY)


def counted(differences: Any) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """The differences per kind, and a sample of them (the first keys in key order)."""
    counts = {MISSING: 0, EXTRA: 0, DIFFERENT: 0}
    for row in differences.groupBy(KIND).count().collect():
        counts[str(row[KIND])] = int(row["count"])
    sample = [
        {"key": key_value(str(row[KEY])), "kind": str(row[KIND])}
        for row in differences.select(KEY, KIND).orderBy(KEY).limit(SAMPLE_SIZE).collect()
    ]
    return counts, sample


def key_value(text: str) -> Any:
    """A canonical key as a sample shows it: the value of a one-column key (a number when it is one),
    else the list of values."""
    values = [_plain(v) for v in json.loads(text)]
    return values[0] if len(values) == 1 else values


def _plain(value: str | None) -> Any:
    if value is not None and value.lstrip("-").isdigit() and len(value) < 19:
        return int(value)
    return value

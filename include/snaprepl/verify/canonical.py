"""Canonical text of values, computed in Spark after the read, so equal values of any two databases
give the same text (and the same hash): a value is first cast to the Spark type the copy's column is
written as (what a complete refresh would write), then written out one way per type:

- integers and booleans as Spark prints them; decimals with their column's scale (a decimal without a
  precision, which travels as text, without trailing zeros); floats as Spark prints a float or double;
- timestamps and dates as ISO text to the microsecond; times of day without trailing zeros;
- text as it is (UTF-8), fixed-length ``char(n)`` without the padding some databases add;
- binary as hexadecimal; NULL as JSON's ``null``, never as ``""``.

A row is the JSON array of its canonical values (so NULL and '' differ, and so do values that
merely shift between columns); its hash is ``xxhash64`` of that text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column as SparkColumn
from pyspark.sql import functions as F

from snaprepl.dialects import Column
from snaprepl.dialects.types import to_generic

KEY = "snaprepl_key"
HASH = "snaprepl_hash"
BUCKET = "snaprepl_bucket"
_TIMESTAMP_TEXT = "yyyy-MM-dd HH:mm:ss.SSSSSS"


def quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _strip_zeros(value: SparkColumn) -> SparkColumn:
    """Decimal text without trailing fractional zeros (``1.500`` and ``1.5`` are one value)."""
    stripped = F.regexp_replace(F.regexp_replace(value, r"(\.[0-9]*?)0+$", "$1"), r"\.$", "")
    return F.when(value.contains("."), stripped).otherwise(value)


def canonical(value: SparkColumn, spark_type: str, generic: str) -> SparkColumn:
    """``value`` (already of ``spark_type``) as canonical text; ``generic`` is its column's generic type."""
    kind = spark_type.upper()
    if kind.startswith("TIMESTAMP"):
        return F.date_format(value, _TIMESTAMP_TEXT)
    if kind == "DATE":
        return F.date_format(value, "yyyy-MM-dd")
    if kind == "BINARY":
        return F.hex(value)
    if kind == "STRING" and generic.startswith("numeric"):
        return _strip_zeros(F.trim(value))
    if kind == "STRING" and generic == "time":
        return _strip_zeros(value)
    if kind == "STRING" and generic.startswith(("char", "nchar")):
        return F.rtrim(value)
    return value.cast("string")


def _texts(columns: Sequence[Column], target_type: Any, dialect: str) -> dict[str, SparkColumn]:
    return {
        c.name: canonical(F.col(quoted(c.name)), target_type(c), to_generic(c.type_sql, dialect).name) for c in columns
    }


def key_text(key_columns: Sequence[Column], target_type: Any, dialect: str) -> SparkColumn:
    """The canonical text of a key (columns of the copy's types), as :func:`hashed` names it."""
    return F.to_json(F.array(*_texts(key_columns, target_type, dialect).values()))


def hashed(
    frame: Any,
    columns: Sequence[Column],
    key: Sequence[str],
    target_type: Any,
    dialect: str,
    buckets: int | SparkColumn,
) -> Any:
    """``frame`` (of the copy's types) with its canonical key text, row hash and bucket: of
    ``buckets`` hash buckets of the key, or the expression ``buckets``."""
    texts = _texts(columns, target_type, dialect)
    key_json = F.to_json(F.array(*(texts[k] for k in key)))
    row_json = F.to_json(F.array(*texts.values()))
    return frame.select(
        "*",
        key_json.alias(KEY),
        F.xxhash64(row_json).alias(HASH),
        (F.pmod(F.xxhash64(key_json), F.lit(buckets)) if isinstance(buckets, int) else buckets)
        .cast("long")
        .alias(BUCKET),
    )

"""Spark types for database columns, chosen so values cross without losing meaning or precision.

A numeric without precision travels as text (Spark's decimals stop at 38 digits), a time of day as
text (no Spark type), a timestamp without time zone as TIMESTAMP_NTZ and one with a time zone as a
UTC TIMESTAMP.
"""

from __future__ import annotations

from snaprepl.dialects.types import GenericType

_SPARK = {
    "varchar": "STRING",
    "varchar(n)": "STRING",
    "long varchar": "STRING",
    "nvarchar": "STRING",
    "nvarchar(n)": "STRING",
    "long nvarchar": "STRING",
    "char(n)": "STRING",
    "nchar(n)": "STRING",
    "integer": "INT",
    "smallint": "INT",
    "bigint": "BIGINT",
    "real": "FLOAT",
    "double precision": "DOUBLE",
    "numeric": "STRING",
    "date": "DATE",
    "time": "STRING",
    "datetime": "TIMESTAMP_NTZ",
    "timestamp": "TIMESTAMP_NTZ",
    "timestamptz": "TIMESTAMP",
    "varbinary": "BINARY",
    "varbinary(n)": "BINARY",
    "long varbinary": "BINARY",
    "boolean": "BOOLEAN",
}


def spark_type_of(generic: GenericType) -> str:
    if generic.name == "numeric(p, s)":
        precision, scale = generic.precision or 38, generic.scale or 0
        return f"DECIMAL({precision}, {scale})" if precision <= 38 else "STRING"
    return _SPARK[generic.name]

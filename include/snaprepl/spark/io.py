"""Spark reads and writes through JDBC, one object per connection; dialect quirks are the dialects' flags.

Reads always give Spark the column types (``customSchema``), so a value's meaning never depends on
what a JDBC driver reports: SQLite reports nothing useful, and PostgreSQL's unbounded numeric would
otherwise be cut to 18 decimals. Writes conform the DataFrame to the destination's column types and
then load it: through the dialect's bulk writer where it has one (PostgreSQL's ``COPY`` fed with Arrow
batches, :mod:`snaprepl.dialects.postgres_copy`), otherwise through Spark's JDBC writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from snaprepl.connections.lookup import ConnectionInfo
from snaprepl.dialects import Column
from snaprepl.dialects.types import to_generic
from snaprepl.spark.types import spark_type_of

TEXT_TEMPORAL = {"date", "time", "datetime", "timestamp", "timestamptz"}


@dataclass(frozen=True)
class RangePartitioning:
    """Spark's own partitioning of a read by an integer column's value range."""

    column: str
    lower: int
    upper: int
    partitions: int


@dataclass(frozen=True)
class PredicatePartitioning:
    """One WHERE predicate per partition (key ranges of a non-integer or composite key)."""

    predicates: tuple[str, ...]


Partitioning = RangePartitioning | PredicatePartitioning


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class SparkJdbc:
    """Reading and writing one connection's tables with Spark.

    :param conn: the connection, with its credentials (they go into JDBC options, never into logs).
    :param read_only: reads run in read-only sessions (a snapshot's source: its query cannot write).
    """

    def __init__(
        self, conn: ConnectionInfo, *, fetch_size: int = 10_000, batch_size: int = 10_000, read_only: bool = False
    ) -> None:
        self.conn = conn
        self.dialect = conn.dialect
        self.fetch_size = fetch_size
        self.batch_size = batch_size
        self.read_only = read_only

    # ------------------------------------------------------------------ options

    def _options(self) -> dict[str, str]:
        return {"url": self.conn.jdbc_url(), **self.conn.jdbc_properties()}

    @property
    def _text_temporals(self) -> bool:
        """Dates, times and booleans cross as ISO text and integers (SQLite keeps them so)."""
        return self.dialect.spark_text_temporals

    def read_type(self, column: Column) -> str:
        generic = to_generic(column.type_sql, self.dialect.name)
        if self._text_temporals and generic.name in TEXT_TEMPORAL:
            return "STRING"
        if self._text_temporals and generic.name == "boolean":
            return "INT"
        return spark_type_of(generic)

    def target_type(self, column: Column) -> str:
        """The Spark type values must have before they are written to ``column``."""
        return spark_type_of(to_generic(column.type_sql, self.dialect.name))

    # ------------------------------------------------------------------ reads

    def read(
        self,
        spark: Any,
        query: str,
        columns: Sequence[Column],
        partitioning: Partitioning | None = None,
    ) -> Any:
        """The result of ``query`` (in this connection's dialect) as a DataFrame with ``columns``' types."""
        schema = ", ".join(f"{_quoted(c.name)} {self.read_type(c)}" for c in columns)
        connect = self.dialect.read_only_jdbc(self._options()) if self.read_only else self._options()
        options = {**connect, "customSchema": schema, "fetchsize": str(self.fetch_size)}
        if isinstance(partitioning, PredicatePartitioning):
            frame = spark.read.jdbc(
                url=options.pop("url"),
                table=f"({query}) snaprepl_q",
                predicates=list(partitioning.predicates),
                properties=options,
            )
        else:
            reader = spark.read.format("jdbc").options(**options)
            if isinstance(partitioning, RangePartitioning):
                reader = reader.options(
                    dbtable=f"({query}) snaprepl_q",
                    partitionColumn=self.dialect.quote(partitioning.column),
                    lowerBound=str(partitioning.lower),
                    upperBound=str(partitioning.upper),
                    numPartitions=str(partitioning.partitions),
                )
            else:
                reader = reader.option("query", query)
            frame = reader.load()
        return self._normalize(frame, columns)

    def _normalize(self, frame: Any, columns: Sequence[Column]) -> Any:
        from pyspark.sql import functions as F

        if not self._text_temporals:
            return frame
        converted = []
        for column in columns:
            generic = to_generic(column.type_sql, self.dialect.name).name
            value = F.col(_quoted(column.name))
            if generic == "date":
                value = F.to_date(value)
            elif generic in {"datetime", "timestamp", "timestamptz"}:
                value = F.to_timestamp_ntz(value)
            elif generic == "boolean":
                value = value.cast("boolean")
            converted.append(value.alias(column.name))
        return frame.select(*converted)

    # ------------------------------------------------------------------ writes

    def conform(self, frame: Any, columns: Sequence[Column]) -> Any:
        """``frame`` with exactly ``columns``, cast to the types they are written as."""
        from pyspark.sql import functions as F

        out = []
        for column in columns:
            value = F.col(_quoted(column.name)).cast(self.target_type(column))
            generic = to_generic(column.type_sql, self.dialect.name).name
            if self._text_temporals and generic in TEXT_TEMPORAL:
                # ISO text with microseconds, as SQLite's date functions read it.
                fmt = "yyyy-MM-dd" if generic == "date" else "yyyy-MM-dd HH:mm:ss.SSSSSS"
                value = F.date_format(value, fmt) if generic != "time" else value
            elif self._text_temporals and generic == "boolean":
                value = value.cast("int")
            out.append(value.alias(column.name))
        return frame.select(*out)

    def write(self, frame: Any, schema: str, table: str, columns: Sequence[Column], *, bulk: bool = True) -> int | None:
        """Append ``frame`` to ``schema.table`` (which exists); return the rows written, if known.

        :param bulk: a large load, written by the dialect's bulk writer if it has one (PostgreSQL's COPY,
            whose Python workers cost a second or two to start, repaid from about a hundred thousand rows).
        """
        conformed = self.conform(frame, columns)
        bulk_writer = self.dialect.bulk_writer(self.conn) if bulk else None
        if bulk_writer is not None:
            return bulk_writer(conformed, schema, table, columns)
        if self.dialect.spark_single_writer:
            conformed = conformed.coalesce(1)
        options = {**self._options(), "batchsize": str(self.batch_size)}
        (
            conformed.write.format("jdbc")
            .options(**options)
            .option("dbtable", self.dialect.qualified(schema, table))
            .mode("append")
            .save()
        )
        return None

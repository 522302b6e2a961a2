"""Counts and hash sums per bucket of the key space, computed by the database itself (a verify's
cheap path, :mod:`snaprepl.verify.db_sums`).

A database computes them where its SQL turns equal values of equal column types into the same text:
PostgreSQL's own hash of the row (``hash_record_extended``, PostgreSQL 14+: each value hashed by its
type's hash function, no text made; floats and types without an exact hash go as text, text as its
bytes under ``COLLATE "C"``; older servers leave the sums to Spark); MariaDB's per-value text (NULL
marked apart from ``''``), hashed with ``md5``. The verify uses them only when both sides are the
same dialect and the columns have the same types; every other pair is canonicalised and hashed in
Spark after the read. SQLite has no hash function: always Spark. Sums that disagree only send the
comparison to Spark, which names the differences: a hash can cost time, never hide a difference
that changes the sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from snaprepl.dialects.model import Column
from snaprepl.dialects.types import to_generic

#: Generic types whose PostgreSQL hash function is exact for snaprepl's equality (integer, numeric
#: without its display scale, as the Spark canonical text strips trailing zeros; date and time values).
_HASHED_AS_IS = {
    "smallint", "integer", "bigint", "numeric", "date", "time", "datetime", "timestamp", "timestamptz",
    "boolean", "varbinary", "long varbinary",
}  # fmt: skip
#: Text types: hashed as their bytes (a nondeterministic collation would hash 'A' and 'a' alike).
_TEXT = {"varchar", "char", "nchar", "nvarchar", "long varchar", "long nvarchar"}


class Checksums:
    """Default: the database does not compute verify checksums."""

    if TYPE_CHECKING:

        def quote(self, name: str) -> str: ...

    def checksums_usable(self, session: Any) -> bool:
        """Whether this server computes :meth:`row_digest` (asked once per verify)."""
        return True

    def row_digest(self, columns: Sequence[Column]) -> str | None:
        """A 64-bit (or narrower) integer hash of the canonical text of ``v``'s ``columns``; None when
        the database cannot compute one."""
        return None

    def key_bucket(self, key: Sequence[str], buckets: int) -> str:
        """The bucket (of ``buckets``) of ``v``'s ``key``: a hash of its text."""
        raise NotImplementedError

    def range_bucket(self, column: str, lower: int, width: int) -> str:
        """The range bucket of ``v``'s integer ``column``: ``(column - lower)`` divided by ``width``,
        as an integer (how negative quotients round does not matter: both sides use this SQL)."""
        return f"((v.{self.quote(column)} - ({lower})) / {width})"

    def bucket_sums_sql(self, query: str, columns: Sequence[Column], key: Sequence[str], buckets: int) -> str | None:
        """``SELECT bucket, rows, hash sum`` of ``query``'s rows grouped by ``buckets`` buckets of the
        key; None when the database cannot compute it."""
        digest = self.row_digest(columns)
        if digest is None:
            return None
        return (
            f"SELECT b, COUNT(*), SUM(h) FROM (SELECT {self.key_bucket(key, buckets)} AS b, {digest} AS h "
            f"FROM ({query}) v) s GROUP BY b"
        )

    def range_sums_sql(
        self,
        query: str,
        columns: Sequence[Column],
        column: str,
        bucket: tuple[int, int],
        spans: Sequence[tuple[int, int]],
    ) -> str | None:
        """``SELECT bucket, rows, hash sum, smallest key, largest key`` of ``query``'s rows grouped by
        range buckets (``bucket``: lower, width) of the integer ``column``, only the keys of ``spans``
        (each both ends included; none: every key); None when the database cannot compute it."""
        digest = self.row_digest(columns)
        if digest is None:
            return None
        quoted = f"v.{self.quote(column)}"
        within = " OR ".join(f"({quoted} BETWEEN {lo} AND {hi})" for lo, hi in spans)
        where = f" WHERE {within}" if within else ""
        return (
            f"SELECT b, COUNT(*), SUM(h), MIN(k), MAX(k) FROM (SELECT {self.range_bucket(column, *bucket)} AS b, "
            f"{digest} AS h, {quoted} AS k FROM ({query}) v{where}) s GROUP BY b"
        )


class PostgresChecksums(Checksums):
    # hash_record_extended hashes each value with its type's hash function (the ones hash partitioning
    # relies on, stable across versions): about half the time of making the row's text and hashing it
    # with hashtextextended, itself several times cheaper than md5.
    def checksums_usable(self, session: Any) -> bool:
        # Older servers (13 ended its support in 2025) have their sums computed in Spark.
        return int(session.query("SELECT current_setting('server_version_num')")[0][0]) >= 140000

    def row_digest(self, columns: Sequence[Column]) -> str | None:
        return f"hash_record_extended(ROW({', '.join(self._hashable(c) for c in columns)}), 0)"

    def _hashable(self, column: Column) -> str:
        value = f"v.{self.quote(column.name)}"
        generic = to_generic(column.type_sql, "postgres").name
        if generic in _HASHED_AS_IS:
            return value
        if generic in _TEXT:
            return f'{value} COLLATE "C"'
        return f"{value}::text"  # floats (-0 and 0 hash alike), json, anything else: by its text

    def key_bucket(self, key: Sequence[str], buckets: int) -> str:
        key_text = f"ROW({', '.join('v.' + self.quote(k) for k in key)})::text"
        return f"mod(hashtextextended({key_text}, 1) & 9223372036854775807, {buckets})"

    def range_bucket(self, column: str, lower: int, width: int) -> str:
        return f"((v.{self.quote(column)}::bigint - ({lower})) / {width})"


class MySqlChecksums(Checksums):
    def _text(self, columns: Sequence[str]) -> str:
        # Each value as hex of its text as bytes (no separator can occur in it), NULL as 'n'.
        values = [f"IFNULL(HEX(CAST(v.{self.quote(c)} AS BINARY)), 'n')" for c in columns]
        return f"CONCAT_WS(',', {', '.join(values)})"

    def row_digest(self, columns: Sequence[Column]) -> str | None:
        return f"CAST(CONV(SUBSTR(MD5({self._text([c.name for c in columns])}), 1, 15), 16, 10) AS UNSIGNED)"

    def key_bucket(self, key: Sequence[str], buckets: int) -> str:
        return f"MOD(CONV(SUBSTR(MD5({self._text(key)}), 1, 8), 16, 10), {buckets})"

    def range_bucket(self, column: str, lower: int, width: int) -> str:
        return f"((v.{self.quote(column)} - ({lower})) DIV {width})"

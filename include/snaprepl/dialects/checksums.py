"""Counts and hash sums per bucket of the key space, computed by the database itself (a verify's
cheap path, :mod:`snaprepl.verify.db_sums`).

A database computes them where its SQL turns equal values of equal column types into the same text:
PostgreSQL's row text (``ROW(...)::text``: NULL and ``''`` differ, numerics keep their scale,
timestamps their microseconds), hashed with ``hashtextextended``; MariaDB's per-value text (NULL
marked apart from ``''``), hashed with ``md5``. The verify uses them only when both sides are the
same dialect and the columns have the same types; every other pair is canonicalised and hashed in
Spark after the read. SQLite has no hash function: always Spark. Sums that disagree only send the
comparison to Spark, which names the differences: a hash can cost time, never hide a difference
that changes the sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING


class Checksums:
    """Default: the database does not compute verify checksums."""

    if TYPE_CHECKING:

        def quote(self, name: str) -> str: ...

    def row_digest(self, columns: Sequence[str]) -> str | None:
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

    def bucket_sums_sql(self, query: str, columns: Sequence[str], key: Sequence[str], buckets: int) -> str | None:
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
        self, query: str, columns: Sequence[str], column: str, bucket: tuple[int, int], span: tuple[int, int] | None
    ) -> str | None:
        """``SELECT bucket, rows, hash sum, smallest key, largest key`` of ``query``'s rows grouped by
        range buckets (``bucket``: lower, width) of the integer ``column``, only the keys of ``span``
        (both ends included) when given; None when the database cannot compute it."""
        digest = self.row_digest(columns)
        if digest is None:
            return None
        quoted = f"v.{self.quote(column)}"
        where = f" WHERE {quoted} BETWEEN {span[0]} AND {span[1]}" if span else ""
        return (
            f"SELECT b, COUNT(*), SUM(h), MIN(k), MAX(k) FROM (SELECT {self.range_bucket(column, *bucket)} AS b, "
            f"{digest} AS h, {quoted} AS k FROM ({query}) v{where}) s GROUP BY b"
        )


class PostgresChecksums(Checksums):
    # hashtextextended (64 bits, PostgreSQL 11+) is several times cheaper than md5. Two servers whose
    # hash functions disagreed would only send the comparison to Spark, never hide a difference.
    def row_digest(self, columns: Sequence[str]) -> str | None:
        return f"hashtextextended(ROW({', '.join('v.' + self.quote(c) for c in columns)})::text, 0)"

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

    def row_digest(self, columns: Sequence[str]) -> str | None:
        return f"CAST(CONV(SUBSTR(MD5({self._text(columns)}), 1, 15), 16, 10) AS UNSIGNED)"

    def key_bucket(self, key: Sequence[str], buckets: int) -> str:
        return f"MOD(CONV(SUBSTR(MD5({self._text(key)}), 1, 8), 16, 10), {buckets})"

    def range_bucket(self, column: str, lower: int, width: int) -> str:
        return f"((v.{self.quote(column)} - ({lower})) DIV {width})"

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

    def bucket_sums_sql(self, query: str, columns: Sequence[str], key: Sequence[str], buckets: int) -> str | None:
        """``SELECT bucket, rows, hash sum`` of ``query``'s rows grouped by ``buckets`` buckets of the
        key; None when the database cannot compute it."""
        return None


class PostgresChecksums(Checksums):
    def bucket_sums_sql(self, query: str, columns: Sequence[str], key: Sequence[str], buckets: int) -> str | None:
        # hashtextextended (64 bits, PostgreSQL 11+) is several times cheaper than md5. Two servers whose
        # hash functions disagreed would only send the comparison to Spark, never hide a difference.
        row = f"ROW({', '.join('v.' + self.quote(c) for c in columns)})::text"
        key_text = f"ROW({', '.join('v.' + self.quote(k) for k in key)})::text"
        bucket = f"mod(hashtextextended({key_text}, 1) & 9223372036854775807, {buckets})"
        digest = f"hashtextextended({row}, 0)"
        return (
            f"SELECT b, COUNT(*), SUM(h::numeric) FROM (SELECT {bucket} AS b, {digest} AS h "
            f"FROM ({query}) v) s GROUP BY b"
        )


class MySqlChecksums(Checksums):
    def _text(self, columns: Sequence[str]) -> str:
        # Each value as hex of its text as bytes (no separator can occur in it), NULL as 'n'.
        values = [f"IFNULL(HEX(CAST(v.{self.quote(c)} AS BINARY)), 'n')" for c in columns]
        return f"CONCAT_WS(',', {', '.join(values)})"

    def bucket_sums_sql(self, query: str, columns: Sequence[str], key: Sequence[str], buckets: int) -> str | None:
        bucket = f"MOD(CONV(SUBSTR(MD5({self._text(key)}), 1, 8), 16, 10), {buckets})"
        digest = f"CAST(CONV(SUBSTR(MD5({self._text(columns)}), 1, 15), 16, 10) AS UNSIGNED)"
        return f"SELECT b, COUNT(*), SUM(h) FROM (SELECT {bucket} AS b, {digest} AS h FROM ({query}) v) s GROUP BY b"

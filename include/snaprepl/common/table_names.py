"""Names: table references ``[schema.]table[@conn_id]`` and generated object names.

A reference is parsed by the statement grammar (``snaprepl.statements``), so a name written in a
statement and one passed as a string to a ``repl_*`` function mean the same thing. Unquoted
identifiers are folded by the dialect's rule once the connection (and so the dialect) is known;
quoted identifiers are kept exactly.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from snaprepl.common.terminal import has_control
from snaprepl.errors import InvalidName

DEFAULT_CONN_ID = "snaprepl_default"

# Airflow connection ids are word characters, dots and dashes.
_CONN_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,249}$")
_MAX_IDENTIFIER_CHARS = 128


@dataclass(frozen=True)
class Ident:
    """One identifier as written: its text and whether it was quoted."""

    text: str
    quoted: bool = False

    def __post_init__(self) -> None:
        if not self.text:
            raise InvalidName("an identifier is empty", "write a table or column name")
        if len(self.text) > _MAX_IDENTIFIER_CHARS:
            raise InvalidName(
                f"identifier {self.text[:40]!r}... is longer than {_MAX_IDENTIFIER_CHARS} characters",
                "use a shorter name",
            )
        if has_control(self.text):  # C0, DEL and C1: none reaches a terminal or a statement
            raise InvalidName(f"identifier {self.text!r} contains control characters", "remove them from the name")

    def __str__(self) -> str:
        if self.quoted:
            return '"' + self.text.replace('"', '""') + '"'
        return self.text


@dataclass(frozen=True)
class TableRef:
    """A table reference as the user wrote it, before the dialect resolves it.

    :param table: the table identifier.
    :param schema: the schema (database on MariaDB/MySQL), or ``None`` for the connection's default.
    :param conn_id: the Airflow connection id; ``snaprepl_default`` when not written.
    :param explicit_conn: whether ``@conn_id`` was written.
    :param qualifier: the first part of a three-part name (Virtuoso's qualifier): the connection's
        database, checked when the table is resolved.
    """

    table: Ident
    schema: Ident | None = None
    conn_id: str = DEFAULT_CONN_ID
    explicit_conn: bool = False
    qualifier: Ident | None = None

    def __post_init__(self) -> None:
        validate_conn_id(self.conn_id)

    def __str__(self) -> str:
        parts = [p for p in (self.qualifier, self.schema, self.table) if p is not None]
        return ".".join(str(p) for p in parts) + f"@{self.conn_id}"


@dataclass(frozen=True)
class ResolvedTable:
    """A table as it exists in its database: exact schema and table names and its connection."""

    conn_id: str
    schema: str
    table: str

    @property
    def key(self) -> str:
        """The catalog key of the table: ``schema.table@conn_id`` with names exactly as stored."""
        return f"{self.schema}.{self.table}@{self.conn_id}"

    def __str__(self) -> str:
        return self.key


def validate_conn_id(conn_id: str) -> str:
    """Return ``conn_id`` if it is a well-formed Airflow connection id, else raise :class:`InvalidName`."""
    if not _CONN_ID_RE.match(conn_id or ""):
        raise InvalidName(
            f"connection id {conn_id!r} is malformed",
            "use letters, digits, '_', '.' and '-' as Airflow connection ids do",
        )
    return conn_id


def shorten(name: str, max_length: int) -> str:
    """Fit ``name`` into ``max_length`` bytes deterministically: a prefix and a short hash of the whole.

    The same long name always gives the same short one, so generated objects can be found again;
    the real names are also recorded in the catalog.
    """
    if len(name.encode("utf-8")) <= max_length:
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    keep = max_length - len(digest) - 1
    prefix = name.encode("utf-8")[:keep].decode("utf-8", errors="ignore")
    return f"{prefix}_{digest}"


def with_suffix(base: str, suffix: str, max_length: int) -> str:
    """``base + suffix`` where only ``base`` is shortened, so suffixes like ``_I_log`` stay readable."""
    return shorten(base, max_length - len(suffix.encode("utf-8"))) + suffix


def underscored(*parts: str) -> str:
    """Join qualified-name parts with underscores, as ``DB.DBA.Orders`` makes ``DB_DBA_Orders``."""
    return "_".join(part.replace(".", "_") for part in parts if part)

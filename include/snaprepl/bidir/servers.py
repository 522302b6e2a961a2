"""Replication servers: every database in bi-directional replication has a unique replication name.

The name is the connection's extra ``replication_name`` when set, else the database's own name (as
Virtuoso names other RDBMS servers by their database). It prefixes every version made there:
``ROWGUID = '<name>@<uuid>'``.
"""

from __future__ import annotations

import re

from snaprepl.catalog.lookup import executable_database
from snaprepl.catalog.records import ServerRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import validate_conn_id
from snaprepl.errors import InvalidArgument, InvalidName

_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:\-]{0,127}$")


class RegisteredServer(str):
    """A replication name (a string, so it nests as the seed's REPL_SERVER_NAME(...) does), with its connection."""

    conn_id: str

    def __new__(cls, name: str, conn_id: str) -> RegisteredServer:
        value = super().__new__(cls, name)
        value.conn_id = conn_id
        return value

    @property
    def name(self) -> str:
        return str.__str__(self)


def replication_name(conn_id: str) -> str:
    """The replication name connection ``conn_id`` gives its database."""
    database = executable_database(conn_id)
    name = database.conn.extra.get("replication_name")
    if not name:
        with database.session() as session:
            name = database.dialect.database_name(session)
    name = str(name)
    if not _NAME_RE.match(name) or "@" in name:
        raise InvalidName(
            f"replication name {name!r} of connection '{conn_id}' is not usable",
            "use letters, digits, '_', '.', ':' and '-' (set the connection's extra replication_name)",
        )
    return name


def register_server(conn_id: str, *, catalog: Catalog) -> RegisteredServer:
    """``REPL_SNP_SERVER(conn_id)``: register the connection's database as a replication server.

    Registering it again returns the same name.

    :raises InvalidArgument: its name is already another connection's.
    """
    validate_conn_id(conn_id)
    catalog.ensure_ready()
    known = catalog.server_of_conn(conn_id)
    if known is not None:
        return RegisteredServer(known.server, conn_id)
    name = replication_name(conn_id)
    other = catalog.server(name)
    if other is not None:
        raise InvalidArgument(
            f"replication name {name!r} already belongs to the server at connection '{other.db_address}'",
            f'give connection \'{conn_id}\' a distinct name in its extra, e.g. {{"replication_name": "{name}_2"}}',
        )
    catalog.add_server(
        ServerRecord(server=name, db_address=conn_id, created_at=utcnow()),
        InvalidArgument(f"replication name {name!r} was registered concurrently"),
    )
    return RegisteredServer(name, conn_id)


def server_name(conn_id: str, *, catalog: Catalog) -> RegisteredServer:
    """``REPL_SERVER_NAME(conn_id)``: the replication name of a registered server."""
    validate_conn_id(conn_id)
    known = catalog.server_of_conn(conn_id)
    if known is None:
        raise InvalidArgument(
            f"connection '{conn_id}' is not a registered replication server",
            f"register it: REPL_SNP_SERVER('{conn_id}')",
        )
    return RegisteredServer(known.server, conn_id)


def server_conn(name: str, *, catalog: Catalog) -> str:
    """The connection id of replication server ``name``."""
    known = catalog.server(name)
    if known is None:
        names = ", ".join(s.server for s in catalog.servers()) or "none"
        raise InvalidArgument(
            f"there is no replication server {name!r} (registered: {names})",
            "register its connection with REPL_SNP_SERVER('conn_id') and use the name it returns",
        )
    return known.db_address

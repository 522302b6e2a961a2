"""A subscriber made unreachable for a while: its replication server's connection pointed at a port
nothing listens on (the catalog's SYS_SERVERS row, as if the database had moved or gone down)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa


def closed_port() -> int:
    """A local TCP port nothing listens on (just freed by the OS)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def unreachable(catalog: Any, server: str, conn_id: str) -> Iterator[None]:
    """Replication server ``server`` uses connection ``conn_id`` (one to a closed port) until the end."""
    with catalog.engine.begin() as conn:
        [address] = conn.execute(sa.text('SELECT "DB_ADDRESS" FROM "SYS_SERVERS" WHERE "SERVER" = :s'), {"s": server})
        _point(conn, server, conn_id)
    try:
        yield
    finally:
        with catalog.engine.begin() as conn:
            _point(conn, server, address[0])


def _point(conn: sa.Connection, server: str, conn_id: str) -> None:
    conn.execute(sa.text('UPDATE "SYS_SERVERS" SET "DB_ADDRESS" = :c WHERE "SERVER" = :s'), {"c": conn_id, "s": server})

"""Finding a subscriber's replica by the name ``snaprepl status`` lists it under (no heavy import)."""

from __future__ import annotations

from dataclasses import dataclass

from snaprepl.catalog.store import Catalog


@dataclass(frozen=True)
class Replica:
    item: str
    server: str
    name: str  # schema.table@conn, as `snaprepl status` lists it


def find_replica(catalog: Catalog, copy: str) -> Replica | None:
    """The subscriber's replica ``copy`` names (``schema.table@conn`` or ``table@conn``), if any."""
    servers = {s.server: s.db_address for s in catalog.servers()}
    for publication in catalog.publications():
        for sub in catalog.subscriptions(publication.sp_item):
            conn = servers.get(sub.ss_server, "?")
            if copy in (f"{sub.ss_schema}.{sub.ss_table}@{conn}", f"{sub.ss_table}@{conn}"):
                return Replica(publication.sp_item, sub.ss_server, f"{sub.ss_schema}.{sub.ss_table}@{conn}")
    return None


def replica_of(catalog: Catalog, item: str, server: str) -> Replica | None:
    """Server ``server``'s replica of publication ``item`` (None: no such table subscription)."""
    servers = {s.server: s.db_address for s in catalog.servers()}
    for sub in catalog.subscriptions(item):
        if sub.ss_server == server and sub.ss_table:
            return Replica(item, server, f"{sub.ss_schema}.{sub.ss_table}@{servers.get(server, '?')}")
    return None

"""Collections in the catalog: resources waiting for a WebDAV lock to be released (SYS_DAV_WAITING).

One row per locked resource and side: the version to be written there, the server it comes from, and
where its body waits on that side (see :mod:`snaprepl.collections.locks`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase
from snaprepl.catalog.manifests import path_key


@dataclass(frozen=True)
class WaitingResource:
    """Version ``rowguid`` of ``path`` from ``origin`` waits for the lock on ``server`` to go.

    ``temp`` is its body, relative to the collection on ``server`` (None: the version is a deletion)."""

    item: str
    server: str
    path: str
    origin: str
    rowguid: str
    temp: str | None
    since: datetime
    last_try: datetime


class DavWaiting(CatalogDatabase):
    """The resources of collections waiting on locks."""

    def waiting(self, item: str | None = None) -> list[WaitingResource]:
        """The waiting resources of ``item`` (of every collection when None), oldest first."""
        t = m.SYS_DAV_WAITING.c
        query = sa.select(m.SYS_DAV_WAITING).order_by(t.DW_ITEM, t.DW_SINCE, t.DW_PATH)
        if item is not None:
            query = query.where(t.DW_ITEM == item)
        with self.begin() as conn:
            return [
                WaitingResource(
                    r.DW_ITEM, r.DW_SERVER, r.DW_PATH, r.DW_ORIGIN, r.DW_ROWGUID, r.DW_TEMP, r.DW_SINCE, r.DW_LAST_TRY
                )
                for r in conn.execute(query)
            ]

    def save_waiting(self, entry: WaitingResource) -> None:
        """Record ``entry``, replacing what waited for the same resource and side."""
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_DAV_WAITING).where(*_key(entry.item, entry.server, entry.path)))
            conn.execute(
                sa.insert(m.SYS_DAV_WAITING).values(
                    DW_ITEM=entry.item,
                    DW_SERVER=entry.server,
                    DW_PATH_KEY=path_key(entry.path),
                    DW_PATH=entry.path,
                    DW_ORIGIN=entry.origin,
                    DW_ROWGUID=entry.rowguid,
                    DW_TEMP=entry.temp,
                    DW_SINCE=entry.since,
                    DW_LAST_TRY=entry.last_try,
                )
            )

    def drop_waiting(self, item: str, server: str, path: str) -> None:
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_DAV_WAITING).where(*_key(item, server, path)))

    def delete_waiting(self, item: str, server: str | None = None) -> None:
        """Forget what waits in ``item`` (on ``server`` only, when given): a dropped publication or subscription."""
        t = m.SYS_DAV_WAITING.c
        where = [t.DW_ITEM == item] + ([t.DW_SERVER == server] if server is not None else [])
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_DAV_WAITING).where(*where))


def _key(item: str, server: str, path: str) -> list[sa.ColumnElement[bool]]:
    t = m.SYS_DAV_WAITING.c
    return [t.DW_ITEM == item, t.DW_SERVER == server, t.DW_PATH_KEY == path_key(path)]

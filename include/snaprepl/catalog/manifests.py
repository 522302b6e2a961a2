"""Collections in the catalog: the manifest of every replicated resource per server (SYS_DAV_MANIFEST)
and the collections' conflict resolvers (SYS_DAV_CR)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase
from snaprepl.errors import SnapreplError


def path_key(path: str) -> str:
    return hashlib.sha256(path.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ManifestEntry:
    """One resource of a collection on one server, as of the last scan or write.

    ``rowguid`` is the version there (of the deletion when ``deleted``); ``old_rowguid`` the version
    agreed with the publisher at the last sync (None: never synced)."""

    path: str
    rowguid: str
    old_rowguid: str | None = None
    etag: str | None = None
    size: int | None = None
    mtime: str | None = None
    deleted: bool = False

    @property
    def pending(self) -> bool:
        """Changed since the last sync (a deletion of a never-synced resource is nothing)."""
        return self.rowguid != self.old_rowguid and not (self.deleted and self.old_rowguid is None)

    @property
    def live(self) -> bool:
        return not self.deleted

    def synced(self, **changes: Any) -> ManifestEntry:
        return replace(self, **changes)


@dataclass(frozen=True)
class DavResolver:
    collection: str
    order: int
    klass: str
    notify_email: str | None
    notify_text: str | None


class Manifests(CatalogDatabase):
    """Manifests and collection resolvers; a resource's catalog changes commit with its replay entries."""

    def manifest(self, item: str, server: str) -> dict[str, ManifestEntry]:
        t = m.SYS_DAV_MANIFEST.c
        query = sa.select(m.SYS_DAV_MANIFEST).where(t.DM_ITEM == item, t.DM_SERVER == server)
        with self.begin() as conn:
            rows = conn.execute(query).fetchall()
        return {
            r.DM_PATH: ManifestEntry(
                r.DM_PATH, r.DM_ROWGUID, r.DM_OLD_ROWGUID, r.DM_ETAG, r.DM_SIZE, r.DM_MTIME, bool(r.DM_DELETED)
            )
            for r in rows
        }

    def save_manifest(
        self,
        item: str,
        server: str,
        entries: Sequence[ManifestEntry],
        removed: Sequence[str] = (),
        replayed: tuple[str, str, str, datetime] | None = None,
        conflicts: Sequence[dict[str, Any]] = (),
        also: tuple[str, ManifestEntry] | None = None,
    ) -> None:
        """Write ``entries`` of ``server``'s manifest (and ``also``: another server's entry), remove
        paths ``removed``, and record the replayed version (source, target, rowguid, time) and
        conflicts, all in one transaction."""
        t = m.SYS_DAV_MANIFEST.c
        with self.begin() as conn:
            if also is not None:
                other, entry = also
                conn.execute(
                    sa.delete(m.SYS_DAV_MANIFEST).where(
                        t.DM_ITEM == item, t.DM_SERVER == other, t.DM_PATH_KEY == path_key(entry.path)
                    )
                )
                conn.execute(sa.insert(m.SYS_DAV_MANIFEST).values(**_values(item, other, entry)))
            for path in [*removed, *(e.path for e in entries)]:
                conn.execute(
                    sa.delete(m.SYS_DAV_MANIFEST).where(
                        t.DM_ITEM == item, t.DM_SERVER == server, t.DM_PATH_KEY == path_key(path)
                    )
                )
            if entries:
                conn.execute(sa.insert(m.SYS_DAV_MANIFEST), [_values(item, server, e) for e in entries])
            if replayed is not None:
                source, target, guid, at = replayed
                conn.execute(
                    sa.insert(m.SYS_URPLOG).values(
                        ITEM=item, SOURCE_SERVER=source, TARGET_SERVER=target, RLOG_ROWGUID=guid, SNAPTIME=at
                    )
                )
            if conflicts:
                conn.execute(sa.insert(m.SYS_SNAPSHOT_CONFLICT), list(conflicts))

    def delete_manifests(self, item: str, server: str | None = None) -> None:
        t = m.SYS_DAV_MANIFEST.c
        where = [t.DM_ITEM == item] + ([t.DM_SERVER == server] if server is not None else [])
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_DAV_MANIFEST).where(*where))

    def dav_resolvers(self, collection: str) -> list[DavResolver]:
        t = m.SYS_DAV_CR.c
        query = sa.select(m.SYS_DAV_CR).where(t.DCR_COLLECTION == collection).order_by(t.DCR_ORDER)
        with self.begin() as conn:
            return [
                DavResolver(r.DCR_COLLECTION, r.DCR_ORDER, r.DCR_CLASS, r.DCR_NOTIFY_EMAIL, r.DCR_NOTIFY_TEXT)
                for r in conn.execute(query)
            ]

    def add_dav_resolver(self, resolver: DavResolver, duplicate: SnapreplError) -> None:
        try:
            with self.begin() as conn:
                conn.execute(
                    sa.insert(m.SYS_DAV_CR).values(
                        DCR_COLLECTION=resolver.collection,
                        DCR_ORDER=resolver.order,
                        DCR_CLASS=resolver.klass,
                        DCR_NOTIFY_EMAIL=resolver.notify_email,
                        DCR_NOTIFY_TEXT=resolver.notify_text,
                    )
                )
        except IntegrityError:
            raise duplicate from None

    def dav_resolvers_under(self, prefix: str, conn_id: str) -> list[DavResolver]:
        """Resolvers of every collection under ``prefix`` on connection ``conn_id``, by collection and order."""
        t = m.SYS_DAV_CR.c
        query = sa.select(m.SYS_DAV_CR).where(t.DCR_COLLECTION.like(f"{prefix}%@{conn_id}"))
        with self.begin() as conn:
            rows = conn.execute(query.order_by(t.DCR_COLLECTION, t.DCR_ORDER)).fetchall()
        return [
            DavResolver(r.DCR_COLLECTION, r.DCR_ORDER, r.DCR_CLASS, r.DCR_NOTIFY_EMAIL, r.DCR_NOTIFY_TEXT) for r in rows
        ]

    def delete_dav_resolvers(self, prefix: str, conn_id: str) -> None:
        """Resolvers of every collection under ``prefix`` (a collection path) on connection ``conn_id``."""
        t = m.SYS_DAV_CR.c
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_DAV_CR).where(t.DCR_COLLECTION.like(f"{prefix}%@{conn_id}")))


def _values(item: str, server: str, e: ManifestEntry) -> dict[str, Any]:
    return {
        "DM_ITEM": item,
        "DM_SERVER": server,
        "DM_PATH_KEY": path_key(e.path),
        "DM_PATH": e.path,
        "DM_ETAG": e.etag,
        "DM_SIZE": e.size,
        "DM_MTIME": e.mtime,
        "DM_ROWGUID": e.rowguid,
        "DM_OLD_ROWGUID": e.old_rowguid,
        "DM_DELETED": e.deleted,
    }

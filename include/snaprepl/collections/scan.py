"""Change detection without triggers: a listing compared with the server's manifest.

A resource whose ETag, size or modification time differ from the manifest gets a new version
``<server>@<uuid>``; one gone from the listing becomes a deletion with a new version. The version
agreed at the last sync (OLD_ROWGUID) is kept, so several changes between syncs fold into one
(I+U → I, U+U → U, U+D → D, D+I → U) and a conflict is judged against what the writer had seen.
"""

from __future__ import annotations

import uuid

from snaprepl.catalog.manifests import ManifestEntry
from snaprepl.catalog.store import Catalog
from snaprepl.collections.stores import Fingerprint, Store


def new_version(server: str) -> str:
    return f"{server}@{uuid.uuid4()}"


def _same(entry: ManifestEntry, fp: Fingerprint) -> bool:
    return (entry.etag, entry.size, entry.mtime) == (fp.etag, fp.size, fp.mtime)


def scan(catalog: Catalog, item: str, store: Store, *, publisher: bool = False) -> dict[str, ManifestEntry]:
    """Bring ``store``'s manifest up to date with its listing; return the manifest. The publisher's
    deletions always leave a tombstone (the push deletes the resource on every subscriber)."""
    listing = store.listing()
    manifest = catalog.manifest(item, store.server)
    changed: list[ManifestEntry] = []
    removed: list[str] = []
    for rel, fp in listing.items():
        entry = manifest.get(rel)
        if entry is not None and entry.live and _same(entry, fp):
            continue
        base = entry.old_rowguid if entry is not None else None
        changed.append(ManifestEntry(rel, new_version(store.server), base, fp.etag, fp.size, fp.mtime))
    for rel, entry in manifest.items():
        if rel in listing or entry.deleted:
            continue
        if entry.old_rowguid is None and not publisher:
            removed.append(rel)  # created and deleted between two syncs: nothing happened
        else:
            changed.append(ManifestEntry(rel, new_version(store.server), entry.old_rowguid, deleted=True))
    if changed or removed:
        catalog.save_manifest(item, store.server, changed, removed)
        manifest = catalog.manifest(item, store.server)
    return manifest

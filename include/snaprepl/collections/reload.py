"""A collection subscriber reloaded from the publisher (REPL_INIT_SNAPSHOT, a backfill's push, a
detached subscriber's return), as a table's replica is: afterwards it holds the publisher's version of
every resource, and nothing the publisher no longer has, except its own changes not pulled yet.

Its local changes are not lost: the subscriber is scanned first, and a resource changed there since
its last pull is pending, which the push leaves alone (the next pull judges it; a backfill and a
detached subscriber's return pull before they reload). A resource the publisher has forgotten (a
deletion whose tombstone went while the subscriber was detached, see
:meth:`~snaprepl.collections.sync.CollectionSync._forget_tombstones`) is deleted there if it is as
the subscriber's manifest says (one locked there stays, named in the outcome, for a later reload).
"""

from __future__ import annotations

from snaprepl.collections.scan import scan
from snaprepl.collections.stores import Fingerprint, Store
from snaprepl.collections.sync import CollectionSync
from snaprepl.errors import ResourceLockedError


def reload(syncer: CollectionSync, sub: Store) -> None:
    """Make ``sub`` hold the publisher's version of every resource (the publisher scanned already)."""
    scan(syncer.catalog, syncer.item, sub)
    syncer.push(sub)
    mine = syncer.catalog.manifest(syncer.item, syncer.pub.server)
    theirs = syncer.catalog.manifest(syncer.item, sub.server)
    for rel, entry in sorted(theirs.items()):
        if rel in mine:
            continue  # the push made it the publisher's version, or left a local change for the pull
        if entry.pending or entry.deleted:
            if entry.deleted:  # a deletion the publisher has forgotten: nothing left to agree on
                syncer.catalog.save_manifest(syncer.item, sub.server, [], removed=[rel])
            continue
        if sub.stat(rel) != Fingerprint(entry.etag, entry.size, entry.mtime):
            syncer.counts.skipped += 1  # changed during this reload: the next pull takes it
            continue
        try:
            sub.delete(rel)
        except ResourceLockedError:  # stays; a later reload deletes it
            syncer.counts.locked.append(f"{rel} on {sub.server}")
            continue
        syncer.counts.deleted += 1
        syncer.catalog.save_manifest(syncer.item, sub.server, [], removed=[rel])

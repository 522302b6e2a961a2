"""A collection sync: pull every subscriber, then push to every subscriber.

Each resource is copied (streamed in chunks) and then committed on its own: its manifests on both
sides, its SYS_URPLOG entry and any conflict go into the catalog in one transaction. A sync killed
anywhere and run again converges: a copy it made but did not record is seen by the next scan as a
change of the side written, judged again, and replaced by the winner. A sync or init holds the
publication's lease (``pull:<item>``) throughout: a second one at the same time is refused as busy.
A resource locked on the side to be written waits there (:mod:`snaprepl.collections.locks`).

With ``spark`` (a SparkSession, or a function returning one) the plain copies run in Spark tasks
(:mod:`snaprepl.collections.spark_copy`); judgement, conflicts and locked resources stay here.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from snaprepl.catalog.manifests import ManifestEntry
from snaprepl.catalog.run_lock import RunLock, check_leases
from snaprepl.catalog.store import Catalog
from snaprepl.collections import resolve
from snaprepl.collections.locks import LockWaits
from snaprepl.collections.scan import scan
from snaprepl.collections.spark_copy import RemoteCopies
from snaprepl.collections.stores import Fingerprint, Store, same_body
from snaprepl.errors import ResourceLockedError
from snaprepl.publications.leases import pull_lease

log = logging.getLogger("snaprepl.collections")


@dataclass
class Counts:
    copied: int = 0
    deleted: int = 0
    conflicts: int = 0
    skipped: int = 0
    locked: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = f"{self.copied} copied, {self.deleted} deleted, {self.conflicts} conflicts"
        text += f", {self.skipped} changed during the sync (next run)" if self.skipped else ""
        return text + (f", waiting on locks: {', '.join(self.locked)}" if self.locked else "")


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _with(entry: ManifestEntry | None, rel: str, guid: str, fp: Fingerprint | None, base: str | None) -> ManifestEntry:
    if fp is None:
        return ManifestEntry(rel, guid, base, deleted=True)
    return ManifestEntry(rel, guid, base, fp.etag, fp.size, fp.mtime)


def _unchanged(store: Store, entry: ManifestEntry | None) -> bool:
    """Whether the resource still is as the scan saw it (a user may write during the sync)."""
    now = store.stat(entry.path) if entry is not None else None
    if entry is None or entry.deleted:
        return now is None
    return now == Fingerprint(entry.etag, entry.size, entry.mtime)


class CollectionSync:
    """Syncs of publication ``item`` (``root`` on connection ``conn_id``) between its publisher and subscribers."""

    def __init__(
        self, catalog: Catalog, item: str, publisher: Store, subscribers: list[Store], *, spark: Any | None = None
    ) -> None:
        self.catalog, self.item, self.pub, self.subs = catalog, item, publisher, subscribers
        self.run_id = f"{_now():%Y%m%dT%H%M%S%f}-{uuid.uuid4().hex[:8]}"
        self.remote = RemoteCopies(spark) if spark is not None else None
        self.counts = Counts()
        self.locks = LockWaits(catalog, item)

    @contextmanager
    def _leased(self) -> Iterator[None]:
        """Hold the publication's lease (:class:`~snaprepl.errors.SnapshotBusy` when another run has it)."""
        with RunLock(self.catalog, pull_lease(self.item), self.run_id, what=f"publication {self.item}"):
            self.locks.load()  # as the previous run left them
            yield

    def sync(self) -> Counts:
        self.pub.check()
        for sub in self.subs:
            sub.check()
        with self._leased():
            scan(self.catalog, self.item, self.pub, publisher=True)
            for sub in self.subs:
                self.pull(sub)
                self._mark(sub, "pull")
            for sub in self.subs:
                self.push(sub)
                self._mark(sub, "push")
            self.locks.sweep([self.pub, *self.subs])
            self._forget_tombstones()
        now = _now()
        self.catalog.update_publication(self.item, sp_last_sync_at=now, sp_last_status="success", sp_last_error=None)
        return self.counts

    def _forget_tombstones(self) -> None:
        """Deletions every side has applied are forgotten (a later create there is a plain insert). A
        detached subscriber holds none back: its manifest keeps them for its reload (see
        :mod:`snaprepl.collections.reload`)."""
        stores, gone = self.forgettable_tombstones()
        if gone:
            for store in stores:
                self.catalog.save_manifest(self.item, store.server, [], removed=gone)

    def forgettable_tombstones(self) -> tuple[list[Store], list[str]]:
        """The sides that are not detached, and the deletions all of them have applied."""
        detached = {s.ss_server for s in self.catalog.subscriptions(self.item) if s.ss_detached_at is not None}
        stores = [store for store in (self.pub, *self.subs) if store.server not in detached]
        manifests = [self.catalog.manifest(self.item, store.server) for store in stores]
        gone = [
            rel
            for rel, entry in manifests[0].items()
            if entry.deleted and all(m.get(rel) is None or (m[rel].deleted and not m[rel].pending) for m in manifests)
        ]
        return stores, gone

    def _mark(self, sub: Store, step: str) -> None:
        """A step done: its watermark (the update replay log is purged behind it) and time."""
        now = _now()
        values: dict[str, Any] = {f"ss_last_{step}_ts": now, f"ss_last_{step}_at": now, "ss_last_status": "success"}
        if step == "push":
            values["ss_init_state"] = "done"
        self.catalog.update_subscription(sub.server, self.item, **values)

    def init(self, sub: Store) -> Counts:
        """REPL_INIT_SNAPSHOT: copy every publisher resource to ``sub``, committing per resource."""
        self.pub.check()
        sub.check()
        with self._leased():
            scan(self.catalog, self.item, self.pub, publisher=True)
            self.push(sub)
            self._mark(sub, "push")
        return self.counts

    def _copy(self, source: Store, target: Store, rel: str, version: str) -> Fingerprint:
        """Write ``version`` of ``rel`` from ``source`` to ``target`` (a locked target keeps it waiting)."""
        return self.locks.write(source, target, rel, version)

    def _commit(
        self,
        target: Store,
        entries: list[ManifestEntry],
        replayed: tuple[str, str, str] | None = None,
        *,
        other: tuple[Store, ManifestEntry] | None = None,
        conflicts: list[dict[str, Any]] | None = None,
    ) -> None:
        rp = (*replayed, _now()) if replayed is not None else None
        also = (other[0].server, other[1]) if other is not None else None
        check_leases()  # a run taken over (thought dead) commits nothing more
        self.catalog.save_manifest(self.item, target.server, entries, replayed=rp, conflicts=conflicts or [], also=also)
        self.locks.committed(target.server, [e.path for e in entries])

    def pull(self, sub: Store) -> None:
        """Replay ``sub``'s changes on the publisher, judging each against the publisher's version."""
        mine = scan(self.catalog, self.item, sub)
        theirs = self.catalog.manifest(self.item, self.pub.server)
        rels = sorted(mine)
        if self.remote is not None:
            rels = self.remote.pull(self, sub, mine, theirs)
            self.locks.reread()
        for rel in rels:
            entry = mine[rel]
            if entry.pending:
                try:
                    self._pull_one(sub, entry, theirs.get(rel))
                except ResourceLockedError as err:  # judged and applied by a sync after the lock is released
                    self.counts.locked.append(f"{rel} on {err.server or self.pub.server}")

    def _pull_one(self, sub: Store, s: ManifestEntry, p: ManifestEntry | None) -> None:
        p_live = p is not None and p.live
        agreed = s.synced(old_rowguid=s.rowguid)
        if p is not None and p.rowguid == s.rowguid:
            self._commit(sub, [agreed])
            return
        if not (_unchanged(self.pub, p) and _unchanged(sub, s)):
            self.counts.skipped += 1
            return
        if s.deleted:
            if p_live and p is not None and p.rowguid == s.old_rowguid:
                self.locks.delete(sub, self.pub, s.path, s.rowguid)
                self.counts.deleted += 1
                pub_entry = _with(p, s.path, s.rowguid, None, None)
                self._commit(self.pub, [pub_entry], (sub.server, self.pub.server, s.rowguid), other=(sub, agreed))
            else:  # the publisher changed it since, or never had it: the deletion is void (push restores it)
                self._commit(sub, [agreed])
            return
        if not p_live or p is None or p.rowguid == s.old_rowguid:
            self._apply_sub(sub, s, agreed)
        elif p.size == s.size and same_body(self.pub, sub, s.path):
            # The same body on both sides (e.g. a copy a killed sync made but did not record): no conflict.
            self._commit(
                self.pub, [p.synced(rowguid=s.rowguid)], (sub.server, self.pub.server, s.rowguid), other=(sub, agreed)
            )
        else:
            self._conflict(sub, s, p)

    def _apply_sub(self, sub: Store, s: ManifestEntry, agreed: ManifestEntry) -> None:
        fp = self._copy(sub, self.pub, s.path, s.rowguid)
        self.counts.copied += 1
        pub_entry = _with(None, s.path, s.rowguid, fp, None)
        self._commit(self.pub, [pub_entry], (sub.server, self.pub.server, s.rowguid), other=(sub, agreed))

    def _conflict(self, sub: Store, s: ManifestEntry, p: ManifestEntry) -> None:
        facts = {
            "path": s.path,
            "incoming": _props(s),
            "current": _props(p),
            "origin": sub.server,
            "open_incoming": self.locks.incoming(sub, self.pub, s.path, s.rowguid),
        }
        resolvers = resolve.nearest_resolvers(self.catalog, self.pub.root, self.pub.conn.conn_id, s.path)
        decision = resolve.decide(resolvers, **facts)
        stamp = _now().strftime("%Y%m%dT%H%M%S%fZ")
        if decision.code == resolve.SUB_WINS:
            backup = self.pub.backup(s.path, stamp, p.rowguid.split("@")[0])
            with _undone_if_locked(self.pub, backup):
                fp = self._copy(sub, self.pub, s.path, s.rowguid)
            record = self._ledger(sub, s, p, decision, self.pub, backup)
            pub_entry = _with(None, s.path, s.rowguid, fp, None)
            self._commit(
                self.pub,
                [pub_entry],
                (sub.server, self.pub.server, s.rowguid),
                other=(sub, s.synced(old_rowguid=s.rowguid)),
                conflicts=[record],
            )
        else:
            backup = sub.backup(s.path, stamp, s.rowguid.split("@")[0])
            with _undone_if_locked(sub, backup):
                fp = self._copy(self.pub, sub, s.path, p.rowguid)
            record = self._ledger(sub, s, p, decision, sub, backup)
            sub_entry = _with(None, s.path, p.rowguid, fp, p.rowguid)
            self._commit(sub, [sub_entry], (self.pub.server, sub.server, p.rowguid), conflicts=[record])

    def _ledger(
        self, sub: Store, s: ManifestEntry, p: ManifestEntry, decision: resolve.Decision, loser: Store, backup: str
    ) -> dict[str, Any]:
        self.counts.conflicts += 1
        log.warning("%s: conflict on %s from %s: backup %s on %s", self.item, s.path, sub.server, backup, loser.server)
        return {
            "CF_ITEM": self.item,
            "CF_TYPE": "U",
            "CF_ORIGIN": sub.server,
            "CF_KEY": json.dumps({"path": s.path}),
            "CF_INCOMING": json.dumps(_props(s)),
            "CF_CURRENT": json.dumps(_props(p)),
            "CF_RESOLVER": decision.resolver,
            "CF_DECISION": decision.code,
            "CF_LOSER": json.dumps(
                {
                    "server": loser.server,
                    "backup": loser.root + backup,
                    "notify_email": decision.notify_email,
                    "notify_text": decision.notify_text,
                }
            ),
            "CF_AT": _now(),
            "CF_NOTIFIED": False,
            "CF_RUN_ID": self.run_id,
            "CF_ENTRY": s.rowguid,
        }

    def push(self, sub: Store) -> None:
        """Make ``sub`` hold the publisher's version of every resource."""
        theirs = self.catalog.manifest(self.item, sub.server)
        mine = self.catalog.manifest(self.item, self.pub.server)
        rels = sorted(set(mine) | set(theirs))
        if self.remote is not None:
            rels = self.remote.push(self, sub, rels, mine, theirs)
            self.locks.reread()
        for rel in rels:
            try:
                self._push_one(sub, rel, mine.get(rel), theirs.get(rel))
            except ResourceLockedError:  # the publisher's version replaces it once the lock is released
                self.counts.locked.append(f"{rel} on {sub.server}")

    def _push_one(self, sub: Store, rel: str, p: ManifestEntry | None, s: ManifestEntry | None) -> None:
        if p is None or (s is not None and s.rowguid == p.rowguid):
            return
        if p.deleted and (s is None or s.deleted):
            return
        if (s is not None and s.pending) or not (_unchanged(self.pub, p) and _unchanged(sub, s)):
            self.counts.skipped += 1  # changed during this sync: left for the next one
            return
        if p.live:
            fp: Fingerprint | None = self._copy(self.pub, sub, rel, p.rowguid)
            self.counts.copied += 1
        else:
            self.locks.delete(self.pub, sub, rel, p.rowguid)
            fp = None
            self.counts.deleted += 1
        self._commit(sub, [_with(s, rel, p.rowguid, fp, p.rowguid)], (self.pub.server, sub.server, p.rowguid))


@contextmanager
def _undone_if_locked(loser: Store, backup: str) -> Iterator[None]:
    """A conflict whose winner cannot be written yet (locked) is judged again once the lock is gone:
    the backup made for it goes."""
    try:
        yield
    except ResourceLockedError:
        loser.discard(backup)
        raise


def _props(e: ManifestEntry) -> dict[str, Any]:
    return {"rowguid": e.rowguid, "etag": e.etag, "size": e.size, "mtime": e.mtime, "deleted": e.deleted}

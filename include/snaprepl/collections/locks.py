"""Resources locked (WebDAV LOCK) on the side to be written wait there, in a temporary location.

A write that finds its target locked keeps the body it streamed in ``_SYS_REPL_BACKUP/.locked/
<path>.<token>`` on the locked side (never scanned nor replicated, like every ``_SYS_REPL_BACKUP``) and
records the waiting version in ``SYS_DAV_WAITING``: the resource, the side, the version and the
server it comes from. ``snaprepl status`` lists them. A deletion that finds its target locked is
recorded the same way, without a body.

A later sync writing the same version to the same side moves the waiting body into place instead of
copying it again, once the lock is gone. The sync reaches that write by its usual path, so what runs
then is what the version needs: a publisher update simply replaces the resource; a subscriber update
is judged against the publisher's version current then (conflict resolution, whose resolvers read
the waiting body as the incoming one). A waiting version that is no longer wanted (its side holds it
already, or a newer version replaced it at its origin) is forgotten and its body removed at the end
of the sync.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC, datetime
from typing import IO

from snaprepl.catalog.dav_waiting import WaitingResource
from snaprepl.catalog.store import Catalog
from snaprepl.collections.stores import BACKUP, Fingerprint, Store
from snaprepl.errors import ResourceLockedError

LOCKED = f"{BACKUP}/.locked"
Opened = AbstractContextManager[IO[bytes]]


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def temp_path(rel: str) -> str:
    """Where a body waiting for the lock on ``rel`` is kept (relative to the collection)."""
    return f"{LOCKED}/{rel}.{uuid.uuid4().hex[:12]}"


class LockWaits:
    """The waiting resources of publication ``item`` during one sync (read once, kept up to date)."""

    def __init__(self, catalog: Catalog, item: str) -> None:
        self.catalog, self.item = catalog, item
        self.pending: dict[tuple[str, str], WaitingResource] = {}
        self._applied: set[tuple[str, str]] = set()

    def load(self) -> LockWaits:
        """Read what the previous runs left waiting (call under the publication's lease)."""
        self.pending = {(w.server, w.path): w for w in self.catalog.waiting(self.item)}
        self._applied.clear()
        return self

    def reread(self) -> None:
        """Read the waiting resources again after Spark tasks wrote (they record and apply their own)."""
        self.pending = {(w.server, w.path): w for w in self.catalog.waiting(self.item)}

    def _wanted(self, target: Store, rel: str, version: str) -> WaitingResource | None:
        """The waiting body of ``version`` on ``target``, if it is still there; any other waiting
        version of ``rel`` there is forgotten."""
        waiting = self.pending.get((target.server, rel))
        if waiting is None:
            return None
        if waiting.rowguid == version and (waiting.temp is None or target.stat(waiting.temp) is not None):
            return waiting
        self.forget(target, waiting)
        return None

    def write(self, source: Store, target: Store, rel: str, version: str) -> Fingerprint:
        """Write ``version`` of ``rel`` from ``source`` to ``target``: its waiting body if it has one,
        else a copy streamed from ``source``.

        :raises ResourceLockedError: ``rel`` is locked on ``target``; the body waits there."""
        waiting = self._wanted(target, rel, version)
        if waiting is not None and waiting.temp is not None:
            try:
                written = target.place(waiting.temp, rel)
            except ResourceLockedError:
                self._save(target, replace(waiting, last_try=_now()))
                raise
            self._applied.add((target.server, rel))
            return written
        with source.reader(rel) as stream:
            tmp = target.stage(stream)
        try:
            written = target.place(tmp, rel)
        except ResourceLockedError:
            self._wait(source, target, rel, version, tmp)
            raise
        except BaseException:
            target.discard(tmp)
            raise
        if waiting is not None:
            self._applied.add((target.server, rel))
        return written

    def _wait(self, source: Store, target: Store, rel: str, version: str, tmp: str) -> None:
        """Keep staged body ``tmp`` of ``version`` in the waiting place, recorded before it is moved
        there (a waiting row whose body is missing is forgotten by the next write)."""
        keep = temp_path(rel)
        now = _now()
        self._save(target, WaitingResource(self.item, target.server, rel, source.server, version, keep, now, now))
        try:
            target.place(tmp, keep)
        except BaseException:
            target.discard(tmp)
            raise

    def delete(self, origin: Store, target: Store, rel: str, version: str) -> None:
        """Delete ``rel`` on ``target`` (deletion ``version`` from ``origin``).

        :raises ResourceLockedError: ``rel`` is locked on ``target``; the deletion waits."""
        waiting = self._wanted(target, rel, version)
        try:
            target.delete(rel)
        except ResourceLockedError:
            now = _now()
            since = waiting.since if waiting is not None else now
            self._save(target, WaitingResource(self.item, target.server, rel, origin.server, version, None, since, now))
            raise
        if waiting is not None:
            self._applied.add((target.server, rel))

    def incoming(self, source: Store, target: Store, rel: str, version: str) -> Callable[[], Opened]:
        """What a resolver's ``open_incoming`` opens: the body of ``version`` waiting on ``target`` if
        there is one, else ``rel`` on ``source``."""
        waiting = self.pending.get((target.server, rel))
        if waiting is not None and waiting.rowguid == version and waiting.temp is not None:
            temp = waiting.temp
            if target.stat(temp) is not None:
                return lambda: target.reader(temp)
        return lambda: source.reader(rel)

    def committed(self, server: str, paths: Iterable[str]) -> None:
        """The writes of ``paths`` on ``server`` are committed: what waited for them is done."""
        for rel in paths:
            if (server, rel) in self._applied:
                self._applied.discard((server, rel))
                self.pending.pop((server, rel), None)
                self.catalog.drop_waiting(self.item, server, rel)

    def _save(self, target: Store, entry: WaitingResource) -> None:
        """Record ``entry`` (replacing what waited for the same resource and side, whose body goes)."""
        old = self.pending.get((entry.server, entry.path))
        self.catalog.save_waiting(entry)
        self.pending[(entry.server, entry.path)] = entry
        if old is not None and old.temp is not None and old.temp != entry.temp:
            target.discard(old.temp)

    def forget(self, target: Store, waiting: WaitingResource) -> None:
        """Forget ``waiting`` and remove its body."""
        self.catalog.drop_waiting(self.item, waiting.server, waiting.path)
        self.pending.pop((waiting.server, waiting.path), None)
        if waiting.temp is not None:
            target.discard(waiting.temp)

    def sweep(self, stores: Iterable[Store]) -> None:
        """Forget the waiting versions no longer wanted: their side holds them, or their origin has
        moved on to another version (which the sync carries instead)."""
        if not self.pending:
            return
        by_server = {store.server: store for store in stores}
        manifests = {server: self.catalog.manifest(self.item, server) for server in by_server}
        for waiting in list(self.pending.values()):
            target = by_server.get(waiting.server)
            if target is None:
                continue
            there = manifests[waiting.server].get(waiting.path)
            source = manifests.get(waiting.origin, {}).get(waiting.path)
            if (there is not None and there.rowguid == waiting.rowguid) or (
                source is None or source.rowguid != waiting.rowguid
            ):
                self.forget(target, waiting)

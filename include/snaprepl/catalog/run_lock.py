"""Runs that must not overlap (refreshes of one snapshot, pulls into one publication, pushes to one
subscriber) hold a lease in SYS_REPL_LOCK.

A run takes the lease by inserting its row (or by a compare-and-set over a stale one), renews it
with a heartbeat, and deletes it when it ends. A lease whose holder died is taken over: at once when
the holder was a process on this host that no longer exists, otherwise when its heartbeat is older
than the lease time.

A run taken over must not go on writing: before each commit, the refresh and sync loops call
:func:`check_leases`, which raises :class:`LeaseLost` when a lease this process holds is no longer its
own (the heartbeat thread also notices, between commits).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from datetime import timedelta
from pathlib import Path
from types import TracebackType

from snaprepl.catalog.records import utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.errors import LeaseLost, SnapshotBusy


def first_line(err: BaseException) -> str:
    """An error as one short line (a driver's error carries its SQL and parameters after it)."""
    return f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[0][:300]}"


LEASE = timedelta(minutes=10)
HEARTBEAT_SECONDS = 30.0
#: How soon a failed heartbeat is tried again.
RETRY_SECONDS = 5.0
log = logging.getLogger(__name__)
#: The leases this process holds, by name (what :func:`check_leases` checks).
_HELD: dict[str, RunLock] = {}
_HELD_GUARD = threading.Lock()


def this_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def holder_is_dead(holder: str | None) -> bool:
    if not holder or ":" not in holder:
        return True
    host, _, pid = holder.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return _zombie(int(pid))


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has ended but is not reaped yet: a killed driver whose JVM died too is reparented,
    and a container's init may reap it late (or never). It holds nothing any more."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] in {"Z", "X"}


class RunLock:
    """Context manager holding the lease ``name``.

    :param catalog: the catalog.
    :param name: what is locked, e.g. ``snapshot:public.orders@dst``.
    :param run_id: this run's id.
    :param what: the locked thing, for messages.
    """

    def __init__(self, catalog: Catalog, name: str, run_id: str, *, what: str, lease: timedelta = LEASE) -> None:
        self.catalog = catalog
        self.name = name
        self.run_id = run_id
        self.what = what
        self.lease = lease
        self.holder = this_holder()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lost = False
        #: Why the heartbeat gave the lease up (None: it did not).
        self.lost_because: str | None = None

    def acquire(self) -> None:
        current = self.catalog.lock_holder(self.name)
        expected = None
        if current is not None:
            run_id, holder, heartbeat = current
            stale = holder_is_dead(holder) or utcnow() - heartbeat > self.lease
            if not stale and run_id != self.run_id:
                raise SnapshotBusy(
                    f"{self.what} is busy with run {run_id} ({holder}, alive at {heartbeat:%Y-%m-%d %H:%M:%S} UTC)",
                    "wait for that run to end; a dead one is taken over after "
                    f"{int(self.lease.total_seconds() // 60)} minutes",
                )
            expected = run_id
        if not self.catalog.take_lock(self.name, expected=expected, run_id=self.run_id, holder=self.holder):
            raise SnapshotBusy(f"{self.what} was taken by another run just now", "try again")
        self.lost = False
        self.lost_because = None
        with _HELD_GUARD:
            _HELD[self.name] = self
        self._thread = threading.Thread(target=self._beat, name=f"snaprepl-heartbeat-{self.run_id}", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        """Renew the lease every :data:`HEARTBEAT_SECONDS`; a beat that fails (a catalog blip) is
        retried every :data:`RETRY_SECONDS`. A lease that could not be renewed before it expires is
        given up (``lost``): another run may take it over, so this one commits nothing more."""
        renewed = time.monotonic()
        wait = HEARTBEAT_SECONDS
        while not self._stop.wait(wait):
            try:
                self.catalog.heartbeat_lock(self.name, self.run_id)
                held = self.still_held()
            except Exception as err:  # the catalog is away: try again until the lease runs out
                unrenewed = time.monotonic() - renewed
                if unrenewed + RETRY_SECONDS >= self.lease.total_seconds():
                    self._give_up(f"its lease could not be renewed for {unrenewed:.0f} s ({first_line(err)})")
                    return
                log.warning("heartbeat of %s failed, retrying: %s", self.what, first_line(err))
                wait = RETRY_SECONDS
                continue
            renewed, wait = time.monotonic(), HEARTBEAT_SECONDS
            if not self._stop.is_set() and not held:
                self.lost = True

    def _give_up(self, why: str) -> None:
        self.lost_because = why
        self.lost = True
        log.error("%s: run %s gives up: %s", self.what, self.run_id, why)

    def still_held(self) -> bool:
        """Whether the lease is still this run's (one catalog read)."""
        current = self.catalog.lock_holder(self.name)
        return current is not None and current[0] == self.run_id and current[1] == self.holder

    def check(self) -> None:
        """:raises LeaseLost: the lease was taken over (this run was thought dead)."""
        if self.lost_because is not None:
            raise LeaseLost(
                f"{self.what}: run {self.run_id} stopped because {self.lost_because}",
                "nothing more of this run is committed; the catalog was unreachable for the whole lease "
                "time: check it, then run again",
            )
        if self.lost or not self.still_held():
            self.lost = True
            raise LeaseLost(
                f"{self.what} was taken over by another run while run {self.run_id} worked",
                "nothing more of this run is committed; the run that took over carries on",
            )

    def release(self) -> None:
        self._stop.set()
        with _HELD_GUARD:
            if _HELD.get(self.name) is self:
                del _HELD[self.name]
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.catalog.release_lock(self.name, self.run_id)

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def check_leases() -> None:
    """Call right before a commit: raises :class:`LeaseLost` if a lease this process holds is no longer
    its own. Costs one catalog read per lease held (none outside a run)."""
    with _HELD_GUARD:
        held = list(_HELD.values())
    for lock in held:
        lock.check()


def snapshot_lock_name(snapshot: str) -> str:
    return f"snapshot:{snapshot}"

"""One refresh per snapshot at a time: a lease held in the snapshot's catalog row.

A refresh takes the lease by a compare-and-set on SN_RUN_ID, renews it with a heartbeat, and gives it
back when it ends. A lease whose holder died is taken over: at once when the holder was a process on
this host that no longer exists, otherwise when its heartbeat is older than the lease time.
"""

from __future__ import annotations

import os
import socket
import threading
from datetime import timedelta
from types import TracebackType

from snaprepl.catalog.store import Catalog, utcnow
from snaprepl.errors import SnapshotBusy, SnapshotNotFound

LEASE = timedelta(minutes=10)
HEARTBEAT_SECONDS = 30.0


def this_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _holder_is_dead(holder: str | None) -> bool:
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
    return False


class RefreshLock:
    """Context manager holding a snapshot's refresh lease.

    :param catalog: the catalog.
    :param snapshot: SN_NAME.
    :param run_id: this run's id.
    """

    def __init__(self, catalog: Catalog, snapshot: str, run_id: str, *, lease: timedelta = LEASE) -> None:
        self.catalog = catalog
        self.snapshot = snapshot
        self.run_id = run_id
        self.lease = lease
        self.holder = this_holder()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self) -> None:
        record = self.catalog.snapshot(self.snapshot)
        if record is None:
            raise SnapshotNotFound(f"there is no snapshot {self.snapshot}")
        current = record.sn_run_id
        if current and current != self.run_id:
            stale = _holder_is_dead(record.sn_run_holder) or (
                record.sn_run_heartbeat is None or utcnow() - record.sn_run_heartbeat > self.lease
            )
            if not stale:
                raise SnapshotBusy(
                    f"snapshot {self.snapshot} is being refreshed by run {current} ({record.sn_run_holder}, "
                    f"alive at {record.sn_run_heartbeat:%Y-%m-%d %H:%M:%S} UTC)",
                    "wait for that refresh to end; a dead one is taken over after "
                    f"{int(self.lease.total_seconds() // 60)} minutes",
                )
        if not self.catalog.take_run_lock(self.snapshot, expected=current, run_id=self.run_id, holder=self.holder):
            raise SnapshotBusy(f"snapshot {self.snapshot} was locked by another refresh just now", "try again")
        self._thread = threading.Thread(target=self._beat, name=f"snaprepl-heartbeat-{self.run_id}", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            self.catalog.heartbeat_run_lock(self.snapshot, self.run_id)

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.catalog.release_run_lock(self.snapshot, self.run_id)

    def __enter__(self) -> RefreshLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

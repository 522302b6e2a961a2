"""A Spark job's processes die with whoever started them.

The submitter (the CLI, or an Airflow task) starts spark-submit in a process group of its own and
kills that group when it leaves by any way it can see: normal end, error, SIGTERM, SIGINT, SIGHUP.
The Python driver, a child of the spark-submit JVM, additionally

* asks the kernel to SIGKILL it when the JVM dies (``PR_SET_PDEATHSIG``), and
* watches the submitter named by :data:`SUBMITTER_ENV` (pid and start time) through a pidfd, and
  exits at once when it is gone: a SIGKILLed CLI can clean nothing up, its driver must not go on.

The driver also reads its connections file once and deletes it before doing anything else, so a
credentials file outlives no job however the job ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from snaprepl.connections import lookup as connections

#: Environment variable naming the submitting process as ``<host>:<pid>:<start time>``.
SUBMITTER_ENV = "SNAPREPL_SUBMITTER"
#: Environment variable carrying the run id to every process of a job (to find them, e.g. in tests).
RUN_ID_ENV = "SNAPREPL_RUN_ID"
#: Exit code of a driver whose submitter or JVM is gone.
ORPHANED_EXIT = 75
_PR_SET_PDEATHSIG = 1


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot), or None when there is no such process.

    With the pid it names one process for good: a pid reused later has another start time."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError, OSError):
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[19] if len(fields) > 19 and fields[0] != "Z" else None


def running(pid: int, start: str) -> bool:
    """Whether the process started at ``start`` with pid ``pid`` still runs."""
    return process_start(pid) == start


def submitter_token() -> str:
    """This process as the submitter of a job (the value of :data:`SUBMITTER_ENV`)."""
    return f"{socket.gethostname()}:{os.getpid()}:{process_start(os.getpid())}"


# ------------------------------------------------------------------ driver side


def attach() -> None:
    """In a job's Python driver: take the connections, die with the JVM and with the submitter.

    Does nothing outside a submitted job (no :data:`SUBMITTER_ENV`), e.g. when tests call a job's
    ``main`` in-process."""
    take_connections()
    token = os.environ.get(SUBMITTER_ENV)
    if not token:
        return
    die_with_parent()
    watch_submitter(token)


def take_connections() -> None:
    """Read the connections file into memory once and delete it."""
    path = os.environ.get(connections.CONNECTIONS_FILE_ENV)
    if not path or connections.TAKEN_CONNECTIONS is not None:
        return
    try:
        connections.TAKEN_CONNECTIONS = connections._connections_from_file()
    finally:
        Path(path).unlink(missing_ok=True)


def die_with_parent() -> None:
    """SIGKILL this process when its parent (the spark-submit JVM) dies; exit now if it already has."""
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent == 1 or os.getppid() != parent:
        abandon()


def watch_submitter(token: str) -> None:
    """Exit as soon as the submitter named by ``token`` (``host:pid:start``) is gone. A submitter on
    another host (a driver in cluster mode) cannot be watched from here."""
    parts = token.split(":")
    host = parts[0] if len(parts) == 3 else ""
    pid_text, start = parts[-2:] if len(parts) >= 2 else ("", "")
    if (host and host != socket.gethostname()) or not pid_text.isdigit():
        return
    pid = int(pid_text)
    handle: int | None = None
    with contextlib.suppress(OSError, AttributeError):
        handle = os.pidfd_open(pid)  # fixed to that process from here on
    if not running(pid, start):  # gone already (its pid may even be someone else's now)
        abandon()
    threading.Thread(target=_wait_for_exit, args=(pid, start, handle), name="snaprepl-lifeline", daemon=True).start()


def _wait_for_exit(pid: int, start: str, handle: int | None) -> None:
    if handle is not None:
        select.select([handle], [], [])  # a pidfd turns readable when its process ends
    else:
        while running(pid, start):
            time.sleep(0.5)
    abandon()


def abandon() -> None:
    """End this driver now: its submitter or JVM is gone, nobody would read its result, and what it
    has not committed must not be committed."""
    with contextlib.suppress(Exception):
        path = os.environ.get(connections.CONNECTIONS_FILE_ENV)
        if path:
            Path(path).unlink(missing_ok=True)
    os._exit(ORPHANED_EXIT)


# ------------------------------------------------------------------ submitter side


def kill_group(leader: int | None) -> None:
    """SIGKILL the process group led by ``leader`` (spark-submit's), whatever of it is left."""
    if leader:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(leader, signal.SIGKILL)


@contextlib.contextmanager
def group_dies_with_caller(leader: Callable[[], int | None]) -> Iterator[None]:
    """While inside: SIGTERM, SIGINT and SIGHUP kill the group ``leader()`` leads, then end this
    process as they would have (SIGINT as KeyboardInterrupt). On the way out, by any way, the group
    is killed too: nothing of a job outlives the call that ran it."""

    def on_signal(signum: int, frame: Any) -> None:
        kill_group(leader())
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            previous[signum] = signal.signal(signum, on_signal)
    try:
        yield
    finally:
        kill_group(leader())
        for number, handler in previous.items():
            signal.signal(number, handler)

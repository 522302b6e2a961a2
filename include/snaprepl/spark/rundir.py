"""Private directories of Spark job runs.

``$TMPDIR/snaprepl-<uid>/`` is this user's (mode 0700, checked on every use) and is never removed.
Each run gets its own ``mkdtemp`` directory in it, ``run-<pid>-<start>-XXXXXXXX``, named after the
submitting process, for its connections and result files; the run removes it when it ends. Runs
that could not (their submitter was SIGKILLed) leave theirs, and the next run removes every
directory whose submitter no longer runs. A directory of a live submitter is never touched, so
concurrent runs cannot pull each other's files away.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

from snaprepl.errors import SnapreplError
from snaprepl.spark.lifeline import process_start, running

RUN_PREFIX = "run-"
#: Files of older snaprepl versions (directly in the parent, no owner in the name) go after a day.
STALE_FILE_SECONDS = 24 * 3600


def private_parent() -> Path:
    """``$TMPDIR/snaprepl-<uid>``: created atomically (mode 0700) if missing; refused if it is not a
    directory that only this user can enter."""
    path = Path(tempfile.gettempdir()) / f"snaprepl-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        raise SnapreplError(f"{path} is not a directory private to this user", "remove it; snaprepl recreates it")
    return path


def new_run_dir() -> Path:
    """A new directory (0700) of this process's run, after sweeping those of dead submitters."""
    for _ in range(5):
        parent = private_parent()
        sweep(parent)
        prefix = f"{RUN_PREFIX}{os.getpid()}-{process_start(os.getpid())}-"
        try:
            return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        except FileNotFoundError:  # the parent was removed under us (by hand): make it again
            continue
    raise SnapreplError(f"cannot create a directory in {private_parent()}", "check the temporary directory")


def owner_of(name: str) -> tuple[int, str] | None:
    """(pid, start time) of the submitter of run directory ``name``."""
    if not name.startswith(RUN_PREFIX):
        return None
    parts = name[len(RUN_PREFIX) :].split("-")
    return (int(parts[0]), parts[1]) if len(parts) >= 3 and parts[0].isdigit() else None


def sweep(parent: Path) -> None:
    """Remove run directories whose submitter is gone, and day-old files of older versions."""
    now = time.time()
    try:
        entries = list(os.scandir(parent))
    except FileNotFoundError:
        return
    for entry in entries:
        owner = owner_of(entry.name)
        if owner is not None:
            if not _alive(*owner):
                shutil.rmtree(entry.path, ignore_errors=True)
            continue
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_FILE_SECONDS
        except FileNotFoundError:
            continue
        if old and not entry.is_dir(follow_symlinks=False):
            Path(entry.path).unlink(missing_ok=True)


def _alive(pid: int, start: str) -> bool:
    if start != "None":
        return running(pid, start)
    try:  # no /proc: by pid alone
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_run_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)

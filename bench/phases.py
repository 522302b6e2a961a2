"""Where one ``snaprepl`` command's time goes: the command run in this process, its phases clocked.

    .venv/bin/python bench/phases.py sql "UPDATE SNAPSHOT dst@conn"

Prints to stderr, for each phase as it ends, the seconds since this interpreter started and the
phase's own seconds: the imports, the idle check, the Spark Connect session (pyspark's import is in
the first), the job's steps, every Spark Connect request (execute, analyze, config) and the last
exit handler; what remains of the command's wall time is the interpreter's exit. The modules
clocked are imported before the command starts (their import time shows in "clocks set").
bench_refresh.py --phases runs this on a 10-change and an empty complete refresh in connect mode.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import sys
import time
from typing import Any

STARTED = time.monotonic()
#: (module, attribute or Class.method): the phases clocked, where the caller looks them up.
PHASES = [
    ("snaprepl.submit.refresh", "idle_refresh"),
    ("snaprepl.submit.refresh", "prepare"),
    ("snaprepl.spark.connect", "run_job"),
    ("snaprepl.refresh.runner", "check_sources"),
    ("snaprepl.refresh.incremental", "pending_window"),
    ("snaprepl.refresh.incremental", "_stage_and_apply"),
    ("snaprepl.refresh.change_pipe", "_pipe"),
    ("snaprepl.refresh.incremental", "_apply"),
    ("snaprepl.dialects.base", "Dialect.analyze"),
    ("snaprepl.refresh.staged_entries", "StagedEntries.of"),
    ("snaprepl.refresh.staged_entries", "StagedEntries._read"),
    ("snaprepl.refresh.incremental", "_apply_batch"),
    ("snaprepl.catalog.snapshots", "Snapshots.record_applied"),
    ("snaprepl.catalog.applied", "OpenApplied.write"),
    ("snaprepl.catalog.applied", "OpenApplied.commit"),
    ("snaprepl.catalog.applied", "StagedApplied.write"),
    ("snaprepl.catalog.applied", "StagedApplied.commit"),
    ("snaprepl.refresh.complete", "_pipe_copy"),
    ("snaprepl.refresh.complete", "_copy"),
    ("snaprepl.refresh.complete", "_replace"),
    ("snaprepl.refresh.runner", "record_succeeded"),
    ("snaprepl.bidir.sync", "PublicationSync.init"),
    ("snaprepl.bidir.init", "_bookmark"),
    ("snaprepl.bidir.init", "is_empty"),
    ("snaprepl.bidir.init_stage", "InitCopy.__init__"),
    ("snaprepl.bidir.init_stage", "InitCopy.straight_into"),
    ("snaprepl.bidir.init_stage", "InitCopy.into"),
    ("snaprepl.bidir.init", "_chunks"),
    ("snaprepl.bidir.init", "apply_staged"),
]
#: Spark Connect client methods that make one request each.
REQUESTS = ("_execute_and_fetch", "_analyze", "config")


def stamp(text: str) -> None:
    sys.stderr.write(f"[{time.monotonic() - STARTED:6.3f}] {text}\n")


def clocked(name: str, func: Any, then: Any = None) -> Any:
    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        began = time.monotonic()
        try:
            return func(*args, **kwargs)
        finally:
            stamp(f"{time.monotonic() - began:6.3f} s  {name}")
            if then is not None:
                then()

    return run


def clock_requests() -> None:
    """Clock the Connect client's requests (once: after the first session opened, pyspark is loaded)."""
    from pyspark.sql.connect.client import core

    for name in REQUESTS:
        method = getattr(core.SparkConnectClient, name)
        if not hasattr(method, "__wrapped__"):
            setattr(core.SparkConnectClient, name, clocked(f"  request {name}", method))


def main() -> None:
    atexit.register(lambda: stamp("last exit handler"))
    from snaprepl.cli import run

    stamp("snaprepl.cli imported")
    for module_name, name in PHASES:
        owner: Any = importlib.import_module(module_name)
        *path, attribute = name.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, attribute, clocked(f"{module_name}.{name}", getattr(owner, attribute)))
    connect = importlib.import_module("snaprepl.spark.connect")
    connect.session_for = clocked("session_for (with pyspark's import)", connect.session_for, clock_requests)
    stamp("clocks set")
    sys.argv = ["snaprepl", *sys.argv[1:]]
    run()


if __name__ == "__main__":
    main()

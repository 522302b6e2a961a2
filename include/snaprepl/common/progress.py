"""Progress of a long job: one INFO line per batch or commit on the ``snaprepl.progress`` logger (the
job's output, which the Spark provider streams into the Airflow task log), and the latest state in
the run's progress file (``SNAPREPL_PROGRESS_FILE``), from which the command line draws a bar on a
terminal while the job runs in its spark-submit child. A job run in the caller's process (Spark
Connect mode) is told its progress file by :data:`PROGRESS_FILE` instead of the environment.

A line reads ``snaprepl progress: complete refresh of t@c: 1200 rows so far of ~5000 (24%), 300 rows/s,
4.0 s elapsed``; ``~`` marks an estimated total.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TextIO

from snaprepl.common.terminal import visible

PROGRESS_FILE_ENV = "SNAPREPL_PROGRESS_FILE"
#: The progress file of a job that runs in this process (Spark Connect mode).
PROGRESS_FILE: ContextVar[str | None] = ContextVar("snaprepl_progress_file", default=None)
log = logging.getLogger("snaprepl.progress")


def configure_job_logging() -> None:
    """Show snaprepl's INFO lines on the job's stderr (Spark's own logging stays at ``spark.log.level``).

    A job process has no logging configured: without this its progress lines would be dropped.
    """
    logger = logging.getLogger("snaprepl")
    if any(getattr(h, "snaprepl_job", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    handler.snaprepl_job = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


class Progress:
    """Rows done of one job step.

    :param what: the step, e.g. ``incremental refresh of t@c``.
    :param total: rows the step will do, when known.
    :param estimated: ``total`` is an estimate (a table's statistics).
    :param bar: the command line draws a bar of this step (initial loads, complete refreshes).
    """

    def __init__(self, what: str, total: int | None = None, *, estimated: bool = False, bar: bool = False) -> None:
        self.what = what
        self.total = total
        self.estimated = estimated
        self.bar = bar
        self.rows = 0
        self.started = time.monotonic()
        self._file = PROGRESS_FILE.get() or os.environ.get(PROGRESS_FILE_ENV)

    def start(self) -> Progress:
        self._report()
        return self

    def advance(self, rows: int) -> None:
        """``rows`` more done (one batch or commit)."""
        self.rows += rows
        self._report()

    def reached(self, rows: int, total: int | None = None) -> None:
        """``rows`` done in all (a count that is known only as a whole); ``total`` when it became exact."""
        if total is not None:
            self.total, self.estimated = total, False
        self.rows = rows
        self._report()

    def tasks(self, done: int, tasks: int) -> None:
        """A copy running as one Spark action has ``done`` of its ``tasks`` done: rows of the estimated
        total in that proportion (without an estimate, the rows are known when the copy ends)."""
        if self.total and tasks:
            self.reached(self.total * done // tasks)

    def state(self) -> dict[str, Any]:
        elapsed = time.monotonic() - self.started
        return {
            "what": self.what,
            "rows": self.rows,
            "total": self.total,
            "estimated": self.estimated,
            "elapsed": round(elapsed, 3),
            "rate": self.rows / elapsed if elapsed > 0 else 0.0,
            "bar": self.bar,
        }

    def _report(self) -> None:
        state = self.state()
        log.info("snaprepl progress: %s: %s", self.what, describe(state))
        if self._file:
            with contextlib.suppress(OSError):  # the run's directory went away: the log still tells
                temporary = f"{self._file}.tmp"
                fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as handle:
                    json.dump(state, handle)
                os.replace(temporary, self._file)


def describe(state: dict[str, Any]) -> str:
    """``1200 rows so far of ~5000 (24%), 300 rows/s, 4.0 s elapsed``."""
    text = f"{state['rows']} rows so far"
    total = state.get("total")
    if total:
        text += f" of {'~' if state.get('estimated') else ''}{total} ({min(100, 100 * state['rows'] // total)}%)"
    return f"{text}, {state['rate']:.0f} rows/s, {state['elapsed']:.1f} s elapsed"


def render_bar(state: dict[str, Any], width: int = 30) -> str:
    """One terminal line: ``[#########.........]  45% 4500 of ~10000 rows, 300 rows/s, 15 s``."""
    total = state.get("total")
    if total:
        done = min(1.0, state["rows"] / total)
        filled = int(done * width)
        bar = "#" * filled + "." * (width - filled)
        return f"[{bar}] {done * 100:3.0f}% {state['what']}: {describe(state)}"
    return f"[{'?' * width}] {state['what']}: {describe(state)}"


def read_state(path: Path) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state


@contextlib.contextmanager
def ticking(every: float, tick: Callable[[], None], name: str) -> Iterator[None]:
    """Call ``tick()`` every ``every`` seconds in a daemon thread while the block runs; the thread is
    joined before the block's end returns."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every):
            tick()

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@contextlib.contextmanager
def bar_while(path: Path, stream: TextIO | None = None, every: float = 0.25) -> Iterator[None]:
    """Draw the job's progress bar from ``path`` on ``stream`` (stderr) while the block runs, if it is a
    terminal and the job's step asks for a bar; nothing otherwise."""
    out = stream or sys.stderr
    if not out.isatty():
        yield
        return
    drawn: list[str] = []

    def draw() -> None:
        state = read_state(path)
        if state and state.get("bar"):
            line = render_bar(state)
            if not drawn or drawn[-1] != line:
                out.write("\r\x1b[K" + visible(line))  # the bar's own control, and no other
                out.flush()
                drawn.append(line)

    try:
        with ticking(every, draw, "snaprepl-progress-bar"):
            yield
    finally:
        draw()  # the last state, so a short job ends with its bar full
        if drawn:
            out.write("\n")
            out.flush()

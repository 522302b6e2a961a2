"""How far a Spark action has got: its tasks done of all, polled from Spark's status tracker while one
long write (a complete refresh's copy, an initial load's staging) runs as a single action."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from snaprepl.common.progress import ticking


def tasks_done(spark: Any) -> tuple[int, int]:
    """(tasks done, tasks in all) of the stages running now; (0, 0) when Spark cannot tell (Spark Connect)."""
    try:
        tracker = spark.sparkContext.statusTracker()
    except Exception:  # no SparkContext in this session (Spark Connect)
        return 0, 0
    done = total = 0
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            done += info.numCompletedTasks
            total += info.numTasks
    return done, total


@contextlib.contextmanager
def reporting_tasks(spark: Any, report: Callable[[int, int], None], every: float = 5.0) -> Iterator[None]:
    """Call ``report(done, total)`` every ``every`` seconds while the block runs, when the count moved."""
    last = (0, 0)

    def poll() -> None:
        nonlocal last
        now = tasks_done(spark)
        if now[1] and now != last:
            report(*now)
            last = now

    with ticking(every, poll, "snaprepl-task-progress"):
        yield

"""Python's cyclic garbage collector paused while a step makes many acyclic objects.

Making a million tuples (a refresh's log entries, read or written) starts a full collection every
few hundred thousand objects, each walking every object alive: seconds of a large refresh for no
garbage (tuples of strings and datetimes hold no cycles).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off (process-wide) while inside; back on after if it was on."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()

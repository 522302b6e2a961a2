"""The leases a publication's sync steps hold (``catalog/run_lock.RunLock``), for tables and collections alike.

A pull (and a collection's scan of its publisher) holds the publication's pull lease, a push or an
initial load the subscriber's push lease, so a step of the CLI and one of a DAG never run at once;
``snaprepl status`` reports the pull lease's holder as the publication's running sync.
"""

from __future__ import annotations


def pull_lease(item: str) -> str:
    """The lease of publication ``item``'s pulls."""
    return f"pull:{item}"


def push_lease(item: str, server: str) -> str:
    """The lease of the pushes and initial loads of ``server``'s replica of ``item``."""
    return f"push:{item}:{server}"


def step_lease(item: str, kind: str, server: str) -> str:
    """The lease a step of ``kind`` (``pull``, ``push`` or ``init``) with ``server`` holds."""
    return pull_lease(item) if kind == "pull" else push_lease(item, server)

"""Collection resolvers of the user's own, named by import path in ``REPL_ADD_DAV_CR``.

A collection resolver gets the resource's path, the incoming and current versions' properties, the
origin server and ``open_incoming`` (reads the incoming body); it returns 0, 1 or 3.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

#: What :func:`body_decides` was called with (this process only).
CALLS: list[dict[str, Any]] = []


def body_decides(
    *, path: str, incoming: dict[str, Any], current: dict[str, Any], origin: str, open_incoming: Any
) -> int:
    """The incoming version wins when its body asks to be kept ("KEEP" in its first line), else the
    publisher's."""
    with open_incoming() as stream:
        first = stream.readline()
    CALLS.append({"path": path, "incoming": incoming, "current": current, "origin": origin, "first": first})
    return 1 if b"KEEP" in first else 3


def waits_for_release(**facts: Any) -> int:
    """Says it started (file ``started`` in ``$SNAPREPL_TEST_GATE``), then waits for file ``release``
    there (at most two minutes) and leaves the decision to the next resolver: a sync held still."""
    gate = Path(os.environ["SNAPREPL_TEST_GATE"])
    (gate / "started").touch()
    deadline = time.monotonic() + 120
    while not (gate / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return 0

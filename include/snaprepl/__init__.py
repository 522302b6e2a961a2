"""snaprepl: trigger-based snapshot replication between relational databases.

The Python API carries the seed's (Virtuoso's) function names; see :mod:`snaprepl.api`.
The names below are loaded on first use (PEP 562), so ``import snaprepl.anything`` loads nothing else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from snaprepl.api import (
        repl_create_inc_snapshot,
        repl_create_snapshot,
        repl_create_snapshot_log,
        repl_drop_snapshot,
        repl_drop_snapshot_log,
        repl_purge_rplogs,
        repl_purge_snapshot_log,
        repl_refresh_inc_snapshot,
        repl_refresh_noninc_snapshot,
        repl_set_snapshot_schedule,
    )
    from snaprepl.api.script import run_script
    from snaprepl.errors import SnapreplError

__version__ = "0.1.0"

#: Where each lazily exported name is defined.
_EXPORTS = {
    "SnapreplError": "snaprepl.errors",
    "repl_create_inc_snapshot": "snaprepl.api",
    "repl_create_snapshot": "snaprepl.api",
    "repl_create_snapshot_log": "snaprepl.api",
    "repl_drop_snapshot": "snaprepl.api",
    "repl_drop_snapshot_log": "snaprepl.api",
    "repl_purge_rplogs": "snaprepl.api",
    "repl_purge_snapshot_log": "snaprepl.api",
    "repl_refresh_inc_snapshot": "snaprepl.api",
    "repl_refresh_noninc_snapshot": "snaprepl.api",
    "repl_set_snapshot_schedule": "snaprepl.api",
    "run_script": "snaprepl.api.script",
}

__all__ = [
    "SnapreplError",
    "repl_create_inc_snapshot",
    "repl_create_snapshot",
    "repl_create_snapshot_log",
    "repl_drop_snapshot",
    "repl_drop_snapshot_log",
    "repl_purge_rplogs",
    "repl_purge_snapshot_log",
    "repl_refresh_inc_snapshot",
    "repl_refresh_noninc_snapshot",
    "repl_set_snapshot_schedule",
    "run_script",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'snaprepl' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])

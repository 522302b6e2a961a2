"""snaprepl: trigger-based snapshot replication between relational databases.

The Python API carries the seed's (Virtuoso's) function names; see :mod:`snaprepl.api`.
"""

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
from snaprepl.errors import SnapreplError
from snaprepl.statements.executor import run_script

__version__ = "0.1.0"

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

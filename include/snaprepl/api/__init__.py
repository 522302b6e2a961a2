"""The Python API, with the seed's function names: snapshots and logs (:mod:`snaprepl.api.snapshots`),
bi-directional replication (:mod:`snaprepl.api.replication`) and statements run as scripts
(:mod:`snaprepl.api.script`, which maps each statement to one of these functions).

:data:`FUNCTIONS` names every function a statement may call. ``from snaprepl.api import repl_...`` and
``from snaprepl import api`` reach every function from here.
"""

from __future__ import annotations

from snaprepl.api.replication import (
    repl_add_dav_cr,
    repl_add_snapshot_cr,
    repl_create_snapshot_pub,
    repl_create_snapshot_sub,
    repl_drop_snapshot_pub,
    repl_drop_snapshot_sub,
    repl_init_snapshot,
    repl_purge_urplogs,
    repl_server_name,
    repl_set_publication_reinit,
    repl_set_publication_schedule,
    repl_set_publication_spark_conn,
    repl_set_publication_stale,
    repl_set_publication_verify_schedule,
    repl_snp_server,
    repl_update_snapshot,
)
from snaprepl.api.snapshots import (
    FUNCTIONS,
    repl_create_inc_snapshot,
    repl_create_snapshot,
    repl_create_snapshot_log,
    repl_drop_snapshot,
    repl_drop_snapshot_log,
    repl_purge_rplogs,
    repl_purge_snapshot_log,
    repl_refresh_inc_snapshot,
    repl_refresh_noninc_snapshot,
    repl_repair_replica,
    repl_repair_snapshot,
    repl_set_snapshot_schedule,
    repl_set_snapshot_spark_conn,
    repl_set_snapshot_verify_schedule,
    repl_verify_replica,
    repl_verify_snapshot,
)

__all__ = [
    "FUNCTIONS",
    "repl_add_dav_cr",
    "repl_add_snapshot_cr",
    "repl_create_inc_snapshot",
    "repl_create_snapshot",
    "repl_create_snapshot_log",
    "repl_create_snapshot_pub",
    "repl_create_snapshot_sub",
    "repl_drop_snapshot",
    "repl_drop_snapshot_log",
    "repl_drop_snapshot_pub",
    "repl_drop_snapshot_sub",
    "repl_init_snapshot",
    "repl_purge_rplogs",
    "repl_purge_snapshot_log",
    "repl_purge_urplogs",
    "repl_refresh_inc_snapshot",
    "repl_refresh_noninc_snapshot",
    "repl_repair_replica",
    "repl_repair_snapshot",
    "repl_server_name",
    "repl_set_publication_reinit",
    "repl_set_publication_schedule",
    "repl_set_publication_spark_conn",
    "repl_set_publication_stale",
    "repl_set_publication_verify_schedule",
    "repl_set_snapshot_schedule",
    "repl_set_snapshot_spark_conn",
    "repl_set_snapshot_verify_schedule",
    "repl_snp_server",
    "repl_update_snapshot",
    "repl_verify_replica",
    "repl_verify_snapshot",
]

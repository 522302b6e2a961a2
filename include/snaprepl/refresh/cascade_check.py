"""At each refresh of an incremental snapshot: are the foreign-key cascades into its source table still
the ones its log's triggers follow? A cascade added after the log was created (``ALTER TABLE ... ADD
FOREIGN KEY ... ON DELETE CASCADE``) would change rows no trigger logs where cascades fire none
(InnoDB), and the copy would silently keep them (see :mod:`snaprepl.dialects.cascades`)."""

from __future__ import annotations

from snaprepl.catalog.records import LogRecord
from snaprepl.dialects import Dialect
from snaprepl.dialects.base import SqlSession
from snaprepl.dialects.cascades import CascadePlan
from snaprepl.errors import RefreshFailed


def check_cascades(dialect: Dialect, session: SqlSession, log: LogRecord, snapshot_name: str) -> None:
    """One catalog query on the source: the cascade paths into the log's table, against those recorded.

    :raises RefreshFailed: naming a path that is new or gone.
    """
    recorded = set(CascadePlan.from_json(log.snl_cascades).paths)
    current = set(dialect.cascade_paths(session, log.snl_schema, log.snl_table))
    if recorded == current:
        return
    added, gone = sorted(current - recorded), sorted(recorded - current)
    change = f"new cascade {added[0]}" if added else f"cascade {gone[0]} is gone"
    raise RefreshFailed(
        f"snapshot {snapshot_name}: the foreign-key cascades into {log.snl_source} changed since its log was "
        f"created ({change}), and its log's triggers do not follow them",
        f"drop the snapshots of the table and DROP SNAPSHOT LOG FOR {log.snl_source}, then create them again "
        "(a new log follows the cascades), or restore the constraint",
    )

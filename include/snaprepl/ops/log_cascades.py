"""The foreign-key cascades of a snapshot log: planned at ``CREATE SNAPSHOT LOG``, refused where no
trigger can follow them, dropped with the log (see :mod:`snaprepl.dialects.cascades`)."""

from __future__ import annotations

import logging

from snaprepl.database.sessions import Database
from snaprepl.dialects import Dialect, LogObjects, TableInfo
from snaprepl.dialects.base import SqlSession
from snaprepl.dialects.cascades import CascadePlan, CascadeUnsupported
from snaprepl.errors import UnloggableCascade

log = logging.getLogger(__name__)


def plan_cascades(dialect: Dialect, session: SqlSession, info: TableInfo, objects: LogObjects) -> CascadePlan:
    """The extra triggers a log of ``info`` needs so that cascades into it are logged.

    :raises UnloggableCascade: naming the constraint no trigger can follow, and why.
    """
    try:
        return dialect.cascade_plan(session, info, objects)
    except CascadeUnsupported as err:
        raise UnloggableCascade(
            f"cannot log {info.table}: foreign key {err.constraint} cascades into it and fires no trigger there "
            f"({err.reason})",
            "change that constraint to ON DELETE/UPDATE RESTRICT (and delete or update the children first), "
            "or refresh the snapshots of this table completely",
        ) from None


def refuse_cascaded_publication(dialect: Dialect, session: SqlSession, info: TableInfo) -> None:
    """Refuse to publish a table that foreign-key cascades change without firing its triggers (its
    bi-directional log would miss them).

    :raises UnloggableCascade: naming the first such path.
    """
    paths = dialect.cascade_paths(session, info.table.schema, info.table.table)
    if paths:
        raise UnloggableCascade(
            f"cannot publish {info.table}: foreign-key cascades change it without firing its triggers "
            f"({paths[0].removeprefix('unsupported: ')}), so its bi-directional log would miss them",
            "change those constraints to RESTRICT or NO ACTION, or replicate the table one way with a snapshot log",
        )


def drop_cascades(database: Database, cascades: str | None) -> None:
    """Drop a log's cascade triggers (recorded as SNL_CASCADES); each may already be gone."""
    statements = database.dialect.drop_cascade_sql(CascadePlan.from_json(cascades))
    for statement in statements:
        with database.session() as session:
            session.execute(statement)

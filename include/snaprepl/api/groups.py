"""Snapshot groups in the Python API (issue 25): a schema's tables replicated and refreshed together,
to one consistent point (:mod:`snaprepl.ops.groups`, :mod:`snaprepl.ops.group_refresh`)."""

from __future__ import annotations

from snaprepl.api.replication import default_catalog, default_settings
from snaprepl.catalog.store import Catalog
from snaprepl.common.arguments import Flag, checked
from snaprepl.common.table_names import Ident
from snaprepl.ops import group_refresh, groups, snapshots
from snaprepl.settings import Settings
from snaprepl.statements.parser import parse_table_ref
from snaprepl.submit.refresh import submit_refresh

_catalog, _settings = default_catalog, default_settings


@checked
def repl_create_snapshot_group(
    group: str,
    source_schema: str,
    into_schema: str | None = None,
    exclude: str | None = None,
    include_new: Flag = 0,
    schedule: str | None = None,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    refresher: snapshots.Refresher | None = None,
) -> groups.CreatedGroup:
    """``CREATE SNAPSHOT GROUP group FROM SCHEMA source_schema [INTO SCHEMA into_schema] [EXCLUDE
    'exclude'] [INCLUDE NEW TABLES] [SCHEDULE 'schedule']`` (``group``: ``name@dest_conn``)."""
    return groups.create_group(
        parse_table_ref(group), parse_table_ref(source_schema), Ident(into_schema, True) if into_schema else None,
        exclude, bool(include_new), schedule, catalog=_catalog(catalog), settings=_settings(settings),
        refresher=refresher or submit_refresh,
    )  # fmt: skip


@checked
def repl_refresh_snapshot_group(
    group: str,
    nonincremental: Flag = 0,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    refresher: snapshots.Refresher | None = None,
) -> group_refresh.RefreshedGroup:
    """``UPDATE SNAPSHOT GROUP group [AS NONINCREMENTAL]``: every member, parents first."""
    return group_refresh.update_group(
        parse_table_ref(group), nonincremental=bool(nonincremental), catalog=_catalog(catalog),
        settings=_settings(settings), refresher=refresher or submit_refresh,
    )  # fmt: skip


@checked
def repl_add_to_snapshot_group(group: str, snapshot: str, *, catalog: Catalog | None = None) -> groups.ChangedGroup:
    """``ALTER SNAPSHOT GROUP group ADD snapshot``."""
    return groups.alter_group(parse_table_ref(group), parse_table_ref(snapshot), add=True, catalog=_catalog(catalog))


@checked
def repl_remove_from_snapshot_group(
    group: str, snapshot: str, *, catalog: Catalog | None = None
) -> groups.ChangedGroup:
    """``ALTER SNAPSHOT GROUP group REMOVE snapshot``."""
    return groups.alter_group(parse_table_ref(group), parse_table_ref(snapshot), add=False, catalog=_catalog(catalog))


@checked
def repl_set_snapshot_group_schedule(
    group: str, schedule: str | None, *, catalog: Catalog | None = None
) -> groups.ChangedGroup:
    """``ALTER SNAPSHOT GROUP group SCHEDULE 'cron' | NONE``."""
    return groups.set_group_schedule(parse_table_ref(group), schedule, catalog=_catalog(catalog))


@checked
def repl_drop_snapshot_group(group: str, *, catalog: Catalog | None = None) -> groups.ChangedGroup:
    """``DROP SNAPSHOT GROUP group``: its snapshots are kept."""
    return groups.drop_group(parse_table_ref(group), catalog=_catalog(catalog))

"""The Python API, with the seed's function names.

Every function takes table names as strings in the statements' form (``[schema.]table[@conn_id]``)
and returns a result object whose ``str()`` is what ``snaprepl sql`` prints. Keyword-only
``catalog`` and ``settings`` default to the process's catalog and Airflow's ``[snaprepl]`` settings.

>>> from snaprepl import repl_create_snapshot_log
>>> print(repl_create_snapshot_log("orders@src"))  # doctest: +SKIP
snapshot log created for public.orders@src: table RLOG_orders, triggers public_orders_I_log, ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from snaprepl import snapshot_logs
from snaprepl.catalog.store import Catalog
from snaprepl.settings import Settings
from snaprepl.statements.parser import parse_table_ref


def _catalog(catalog: Catalog | None) -> Catalog:
    return catalog if catalog is not None else Catalog.open()


def _settings(settings: Settings | None) -> Settings:
    return settings if settings is not None else Settings.load()


def repl_create_snapshot_log(source_table: str, *, catalog: Catalog | None = None) -> snapshot_logs.CreatedLog:
    """``CREATE SNAPSHOT LOG FOR source_table``: log table ``RLOG_<t>`` and its three triggers.

    :param source_table: ``[schema.]table[@conn_id]`` of a table with a primary key.
    """
    return snapshot_logs.create_snapshot_log(parse_table_ref(source_table), catalog=_catalog(catalog))


def repl_drop_snapshot_log(source_table: str, *, catalog: Catalog | None = None) -> snapshot_logs.DroppedLog:
    """``DROP SNAPSHOT LOG FOR source_table``: drop the triggers and ``RLOG_<t>``, and unregister."""
    return snapshot_logs.drop_snapshot_log(parse_table_ref(source_table), catalog=_catalog(catalog))


def repl_purge_snapshot_log(
    source_table: str,
    force: bool | int = False,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
) -> snapshot_logs.PurgeResult:
    """``PURGE SNAPSHOT LOG FOR source_table [FORCE]``: delete entries every snapshot has applied.

    :param force: purge past snapshots that fell behind, marking them as needing a complete refresh.
    """
    return snapshot_logs.purge_snapshot_log(
        parse_table_ref(source_table),
        catalog=_catalog(catalog),
        settings=_settings(settings),
        force=bool(force),
    )


#: Functions callable from statements, by lower-case name.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f
    for f in (
        repl_create_snapshot_log,
        repl_drop_snapshot_log,
        repl_purge_snapshot_log,
    )
}

"""Checks that keep CREATE and DROP SNAPSHOT from destroying data they were not asked to.

- a destination that already holds rows is filled only when the statement says so
  (``USING EXISTING TABLE`` / ``ON PREBUILT TABLE``): its first complete refresh replaces them;
- a snapshot may not write into one of its own sources, nor into a table that feeds one of them
  through a chain of snapshots;
- ``DROP SNAPSHOT ... WITH DELETE`` keeps a table that other snapshots or a publication read, and
  no snapshot is dropped while a live run refreshes it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from snaprepl.catalog.records import SnapshotRecord
from snaprepl.catalog.run_lock import RunLock, snapshot_lock_name
from snaprepl.catalog.store import Catalog
from snaprepl.catalog.table_lineage import Place, readers_of
from snaprepl.common.table_names import ResolvedTable
from snaprepl.database.sessions import Database
from snaprepl.dialects import TableInfo
from snaprepl.errors import CompleteRefreshRequired, InvalidArgument, SnapshotBusy, SnapshotLogInUse

EXISTING_CLAUSE = "USING EXISTING TABLE"


def check_existing_destination(
    database: Database, resolved: ResolvedTable, existing: TableInfo | None, use_existing: bool
) -> None:
    """Refuse to fill a destination that holds rows unless ``use_existing``; refuse ``use_existing``
    for a destination that does not exist.

    An existing empty table needs no clause: nothing in it can be lost.
    """
    refuse_snaprepl_table(resolved, "a snapshot's destination")
    if existing is None:
        if use_existing:
            raise InvalidArgument(
                f"{EXISTING_CLAUSE} was given but destination {resolved} does not exist",
                f"create the table first, or leave out {EXISTING_CLAUSE} to have it created",
            )
        _check_creatable(database, resolved)
        return
    if use_existing or not _has_rows(database, existing.table):
        return
    raise InvalidArgument(
        f"destination {existing.table} already exists and holds rows, which the snapshot's first complete "
        "refresh would replace",
        f"add {EXISTING_CLAUSE} (or ON PREBUILT TABLE) to fill it anyway, deleting every row the query does "
        "not return, or choose another destination",
    )


#: Name prefixes of the tables snaprepl makes itself: snapshot logs, staging and probe tables.
OWN_TABLE_PREFIXES = ("rlog_", "snaprepl_")


def refuse_snaprepl_table(table: ResolvedTable, role: str, catalog: Catalog | None = None) -> None:
    """Refuse one of snaprepl's own tables (a snapshot log, a staging table) in ``role``.

    :raises InvalidArgument: naming the table.
    """
    own = table.table.lower().startswith(OWN_TABLE_PREFIXES)
    if not own and catalog is not None:
        own = any(
            r.snl_conn == table.conn_id and r.snl_schema == table.schema and r.snl_rlog == table.table
            for r in catalog.logs()
        )
    if own:
        raise InvalidArgument(
            f"{table} is one of snaprepl's own tables (a snapshot log or staging table) and cannot be {role}",
            "name a table of your own",
        )


def _check_creatable(database: Database, resolved: ResolvedTable) -> None:
    """Refuse a destination to create in a missing schema, or whose name a view (or other relation) holds."""
    dialect = database.dialect
    with database.session() as session:
        if not dialect.schema_exists(session, resolved.schema):
            raise InvalidArgument(
                f"schema {resolved.schema} of destination {resolved} does not exist",
                "create the schema first, or choose another destination",
            )
    try:
        with database.session() as session:
            session.query(f"SELECT * FROM {dialect.qualified(resolved.schema, resolved.table)} WHERE 1 = 0")
    except Exception:
        return  # nothing answers to that name: the table can be created
    raise InvalidArgument(
        f"destination {resolved} exists but is not a table (a view?)", "a snapshot writes into a table; choose another"
    )


def _has_rows(database: Database, table: ResolvedTable) -> bool:
    name = database.dialect.qualified(table.schema, table.table)
    with database.session() as session:
        rows = session.query(f"SELECT CASE WHEN EXISTS (SELECT 1 FROM {name}) THEN 1 ELSE 0 END")
    return bool(rows and rows[0][0])


def check_drop_with_delete(catalog: Catalog, record: SnapshotRecord) -> None:
    """Refuse ``DROP SNAPSHOT ... WITH DELETE`` while the destination table is read by other snapshots,
    carries a snapshot log, or is published: dropping it would leave them without their table.

    :raises SnapshotLogInUse: naming what depends on the table.
    """
    place = Place(record.sn_dest_conn, record.sn_dest_schema, record.sn_dest_table)
    readers = readers_of(catalog, place, besides=record.sn_name)
    log = catalog.log(record.sn_name)
    if readers:
        raise SnapshotLogInUse(
            f"the table of snapshot {record.sn_name} feeds snapshot{'s' if len(readers) > 1 else ''} "
            f"{', '.join(readers)}; WITH DELETE would leave them without a source",
            "drop those snapshots first, or drop this one without WITH DELETE to keep its table",
        )
    if catalog.publication(record.sn_name) is not None:
        raise SnapshotLogInUse(
            f"the table of snapshot {record.sn_name} is published for bi-directional replication",
            f"drop the publication first (REPL_DROP_SNAPSHOT_PUB('{record.sn_name}', 2)), or drop without WITH DELETE",
        )
    if log is not None:
        raise SnapshotLogInUse(
            f"the table of snapshot {record.sn_name} carries snapshot log {log.snl_rlog}",
            f"drop the log first (DROP SNAPSHOT LOG FOR {record.sn_name}), or drop without WITH DELETE",
        )


@contextmanager
def holding_run_lease(catalog: Catalog, record: SnapshotRecord) -> Iterator[None]:
    """Hold the snapshot's run lease (the one every refresh takes) while it is dropped: a live run
    makes the drop fail as busy, and no refresh starts half way through the drop.

    :raises SnapshotBusy: naming the run that holds the lease.
    """
    lock = RunLock(
        catalog, snapshot_lock_name(record.sn_name), f"drop-{uuid.uuid4().hex}", what=f"snapshot {record.sn_name}"
    )
    try:
        lock.acquire()
    except SnapshotBusy as err:
        raise SnapshotBusy(f"cannot drop: {err.message}", "wait for that run to end, then drop the snapshot") from None
    try:
        yield
    finally:
        lock.release()


def refuse_stale_incremental(record: SnapshotRecord) -> None:
    """Refuse an incremental refresh of a snapshot the catalog already marks as needing a complete one
    (a forced purge deleted entries it had not applied), before a Spark job is started for it.

    :raises CompleteRefreshRequired: with the reason recorded, and what to run.
    """
    if record.sn_needs_complete:
        raise CompleteRefreshRequired(
            f"snapshot {record.sn_name} needs a complete refresh: {record.sn_needs_complete}",
            f"run UPDATE SNAPSHOT {record.sn_name} AS NONINCREMENTAL, or trigger its DAG with mode nonincremental",
        )

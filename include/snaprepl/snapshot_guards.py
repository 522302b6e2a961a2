"""Checks that keep CREATE and DROP SNAPSHOT from destroying data they were not asked to.

- a destination that already holds rows is filled only when the statement says so
  (``USING EXISTING TABLE`` / ``ON PREBUILT TABLE``): its first complete refresh replaces them;
- a snapshot may not write into one of its own sources, nor into a table that feeds one of them
  through a chain of snapshots;
- ``DROP SNAPSHOT ... WITH DELETE`` keeps a table that other snapshots or a publication read, and
  no snapshot is dropped while a live run refreshes it.
"""

from __future__ import annotations

from snaprepl.db import Database
from snaprepl.dialects import TableInfo
from snaprepl.errors import InvalidArgument
from snaprepl.names import ResolvedTable

EXISTING_CLAUSE = "USING EXISTING TABLE"


def check_existing_destination(
    database: Database, resolved: ResolvedTable, existing: TableInfo | None, use_existing: bool
) -> None:
    """Refuse to fill a destination that holds rows unless ``use_existing``; refuse ``use_existing``
    for a destination that does not exist.

    An existing empty table needs no clause: nothing in it can be lost.
    """
    if existing is None:
        if use_existing:
            raise InvalidArgument(
                f"{EXISTING_CLAUSE} was given but destination {resolved} does not exist",
                f"create the table first, or leave out {EXISTING_CLAUSE} to have it created",
            )
        return
    if use_existing or not _has_rows(database, existing.table):
        return
    raise InvalidArgument(
        f"destination {existing.table} already exists and holds rows, which the snapshot's first complete "
        "refresh would replace",
        f"add {EXISTING_CLAUSE} (or ON PREBUILT TABLE) to fill it anyway, deleting every row the query does "
        "not return, or choose another destination",
    )


def _has_rows(database: Database, table: ResolvedTable) -> bool:
    name = database.dialect.qualified(table.schema, table.table)
    with database.session() as session:
        rows = session.query(f"SELECT CASE WHEN EXISTS (SELECT 1 FROM {name}) THEN 1 ELSE 0 END")
    return bool(rows and rows[0][0])

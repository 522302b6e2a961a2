"""Parsed statements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snaprepl.common.table_names import Ident, TableRef


class Statement:
    """Base of every parsed statement."""


@dataclass(frozen=True)
class Schedule:
    """``SCHEDULE 'cron or preset'`` or ``SCHEDULE NONE`` (``value`` is ``None``: manual only)."""

    value: str | None


@dataclass(frozen=True)
class CreateSnapshotLog(Statement):
    source: TableRef


@dataclass(frozen=True)
class DropSnapshotLog(Statement):
    source: TableRef


@dataclass(frozen=True)
class PurgeSnapshotLog(Statement):
    source: TableRef
    force: bool = False


@dataclass(frozen=True)
class CreateNonincrementalSnapshot(Statement):
    dest: TableRef
    query: str
    schedule: Schedule | None = None
    use_existing: bool = False  # USING EXISTING TABLE / ON PREBUILT TABLE: fill a table that holds rows


@dataclass(frozen=True)
class CreateIncrementalSnapshot(Statement):
    dest: TableRef
    source: TableRef
    columns: str | None = None
    condition: str | None = None
    schedule: Schedule | None = None
    use_existing: bool = False  # USING EXISTING TABLE / ON PREBUILT TABLE: fill a table that holds rows


@dataclass(frozen=True)
class UpdateSnapshot(Statement):
    name: TableRef
    nonincremental: bool = False


@dataclass(frozen=True)
class DropSnapshot(Statement):
    name: TableRef
    with_delete: bool = False


@dataclass(frozen=True)
class AlterSnapshot(Statement):
    name: TableRef
    schedule: Schedule


@dataclass(frozen=True)
class VerifySnapshot(Statement):
    """``VERIFY SNAPSHOT name [WHERE 'condition']``; ``REPAIR SNAPSHOT ...`` has ``repair``."""

    name: TableRef
    condition: str | None = None
    repair: bool = False


@dataclass(frozen=True)
class CreateSnapshotGroup(Statement):
    """``CREATE SNAPSHOT GROUP name FROM SCHEMA source [INTO SCHEMA into] [EXCLUDE 'p, ...']
    [INCLUDE NEW TABLES] [SCHEDULE ...]``; ``source.table`` is the schema."""

    name: TableRef
    source: TableRef
    into: Ident | None = None
    exclude: str | None = None
    include_new: bool = False
    schedule: Schedule | None = None


@dataclass(frozen=True)
class UpdateSnapshotGroup(Statement):
    name: TableRef
    nonincremental: bool = False


@dataclass(frozen=True)
class AlterSnapshotGroup(Statement):
    """``ALTER SNAPSHOT GROUP name ADD | REMOVE member``, or ``... SCHEDULE 'cron' | NONE`` (``member``
    None, ``schedule`` set)."""

    name: TableRef
    member: TableRef | None
    add: bool = False
    schedule: Schedule | None = None


@dataclass(frozen=True)
class DropSnapshotGroup(Statement):
    name: TableRef


@dataclass(frozen=True)
class Call(Statement):
    """A function called by name, e.g. ``REPL_SNP_SERVER('pub_pg')``; arguments may be calls."""

    function: str
    args: tuple[Any, ...] = ()

"""The capabilities a :class:`~snaprepl.dialects.base.Dialect` is made of, one mixin per concern, each in
its own module: how it reads a database's catalog, its bi-directional logs and set statements, how it
replaces a destination's rows, waits on locks, follows foreign-key cascades, bounds watermarks, guards
its log triggers, checksums a copy, lists a schema's tables and alters a destination's columns."""

from __future__ import annotations

from snaprepl.dialects.alter import ColumnAlteration
from snaprepl.dialects.bidir_logs import BidirLogs
from snaprepl.dialects.bidir_sets import BidirSets
from snaprepl.dialects.cascades import CascadeLogging
from snaprepl.dialects.checksums import Checksums
from snaprepl.dialects.guards import LogGuards
from snaprepl.dialects.introspect import Introspection
from snaprepl.dialects.lock_waits import LockWaits
from snaprepl.dialects.replace import RowReplacement
from snaprepl.dialects.schema_tables import SchemaTables
from snaprepl.dialects.watermarks import Watermarks


class Capabilities(
    Introspection,
    BidirLogs,
    BidirSets,
    RowReplacement,
    LockWaits,
    CascadeLogging,
    Watermarks,
    LogGuards,
    Checksums,
    ColumnAlteration,
    SchemaTables,
):
    """Every capability mixin of a dialect (the order is the method resolution order)."""

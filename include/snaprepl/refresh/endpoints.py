"""A snapshot's source and destination, and the facts about them every refresh needs."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from snaprepl.catalog.records import SnapshotRecord
from snaprepl.connections import get_connection
from snaprepl.db import Database
from snaprepl.dialects import TableInfo
from snaprepl.errors import TableNotFound
from snaprepl.names import Ident
from snaprepl.spark.io import SparkJdbc


@dataclass
class Endpoints:
    """The source and destination of one snapshot, for Python-side SQL and for Spark."""

    snapshot: SnapshotRecord
    source_db: Database
    dest_db: Database
    source_io: SparkJdbc
    dest_io: SparkJdbc

    @classmethod
    def of(cls, snapshot: SnapshotRecord) -> Endpoints:
        source = get_connection(snapshot.sn_source_conn)
        dest = get_connection(snapshot.sn_dest_conn)
        return cls(snapshot, Database(source), Database(dest), SparkJdbc(source, read_only=True), SparkJdbc(dest))

    def dest_table(self) -> TableInfo:
        """The destination as it is now (columns, types, key)."""
        dialect = self.dest_db.dialect
        with self.dest_db.session() as session:
            try:
                return dialect.describe(
                    session,
                    Ident(self.snapshot.sn_dest_schema, quoted=True),
                    Ident(self.snapshot.sn_dest_table, quoted=True),
                    self.snapshot.sn_dest_conn,
                )
            except TableNotFound:
                raise TableNotFound(
                    f"the destination of snapshot {self.snapshot.sn_name} does not exist any more",
                    f"drop the snapshot (DROP SNAPSHOT {self.snapshot.sn_name}) and create it again",
                ) from None

    def staging_name(self, purpose: str) -> str:
        """A staging table name, the same for every run of this snapshot (a killed run's is found again)."""
        digest = hashlib.sha1(self.snapshot.sn_name.encode()).hexdigest()[:10]
        return self.dest_db.dialect.shorten(f"snaprepl_{purpose}_{digest}")

    def dispose(self) -> None:
        self.source_db.dispose()
        self.dest_db.dispose()

"""A snapshot's source and destination, and the facts about them every refresh needs."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from snaprepl.catalog.records import SnapshotRecord
from snaprepl.common.table_names import Ident
from snaprepl.connections.lookup import get_connection
from snaprepl.database.errors import lost_between, one_line
from snaprepl.database.sessions import Database
from snaprepl.dialects import TableInfo
from snaprepl.errors import ConnectionLost, TableNotFound
from snaprepl.spark.io import SparkJdbc

log = logging.getLogger(__name__)


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
        return cls(
            snapshot,
            Database(source, role="source"),
            Database(dest, role="destination"),
            SparkJdbc(source, read_only=True),
            SparkJdbc(dest),
        )

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

    def lost(self, err: BaseException) -> ConnectionLost:
        """The error of a run that lost a connection in Spark or a pipe (which one does not say): the
        end whose server no longer answers; else the end the failed operation talked to (a read: the
        source; a write: the destination)."""
        return lost_between(err, self.source_db, self.dest_db)

    def drop_after_failure(self, schema: str, table: str) -> None:
        """Drop a failed run's staging table; if that fails too (the destination died), leave it to the
        purge of dead runs' staging tables and keep the run's own error as the one reported."""
        try:
            with self.dest_db.session() as session:
                session.execute(self.dest_db.dialect.drop_table_sql(schema, table))
        except Exception as err:
            log.warning("staging table %s not dropped after the failure: %s", table, one_line(err))

    def dispose(self) -> None:
        self.source_db.dispose()
        self.dest_db.dispose()

"""What every sync step of a publication of tables works with (:class:`PublicationState`; what it reports:
:class:`snaprepl.publications.outcome.Outcome`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from snaprepl.bidir import resolvers as R
from snaprepl.bidir.servers import server_conn
from snaprepl.bidir.sides import Side
from snaprepl.catalog.records import PublicationRecord, SubscriptionRecord
from snaprepl.catalog.store import Catalog
from snaprepl.errors import ReplicationError
from snaprepl.spark.session import session_of


class PublicationState:
    """A publication, its publisher's side, and what a run of its sync steps shares.

    :param spark: the SparkSession reads go through, or a function that starts it when first needed.
    :param catalog: the catalog.
    :param item: the publication's SP_ITEM.
    :param run_id: this run (locks, in-flight marks, the conflict ledger).
    """

    def __init__(
        self, spark: Any, catalog: Catalog, item: str, run_id: str, *, tolerance_minutes: int, commit_rows: int
    ) -> None:
        publication = catalog.publication(item)
        if publication is None:
            raise ReplicationError(f"there is no publication {item}")
        log = catalog.log(item)
        if log is None:
            raise ReplicationError(f"the log of publication {item} is missing", "drop and create the publication again")
        self._spark = spark
        self.catalog = catalog
        self.publication: PublicationRecord = publication
        self.run_id = run_id
        self.tolerance = timedelta(minutes=tolerance_minutes)
        self.commit_rows = commit_rows
        self.publisher = Side.open(publication.sp_server, log, role=f"publisher {publication.sp_server}")
        self._resolvers: dict[str, list[tuple[str, R.Resolver]]] | None = None

    @property
    def item(self) -> str:
        return self.publication.sp_item

    @property
    def spark(self) -> Any:
        """The SparkSession (started now if it was given as a function that starts it)."""
        self._spark = session_of(self._spark)
        return self._spark

    def subscription(self, server: str) -> SubscriptionRecord:
        record = self.catalog.subscription(server, self.item)
        if record is None:
            raise ReplicationError(f"server {server} does not subscribe to {self.item}")
        return record

    def subscriber(self, server: str) -> Side:
        record = self.subscription(server)
        conn_id = server_conn(server, catalog=self.catalog)
        log = self.catalog.log(f"{record.ss_schema}.{record.ss_table}@{conn_id}")
        if log is None:
            raise missing_replica_log(self.catalog, record, conn_id)
        return Side.open(server, log, role=f"subscriber {server}")

    def resolvers(self) -> dict[str, list[tuple[str, R.Resolver]]]:
        if self._resolvers is None:
            self._resolvers = {"I": [], "U": [], "D": []}
            for record in self.catalog.resolvers(self.item):
                name = (record.cr_class or record.cr_proc) + (f"({record.cr_column})" if record.cr_column else "")
                self._resolvers[record.cr_type].append(
                    (name, R.build(record.cr_class, record.cr_proc, record.cr_column))
                )
        return self._resolvers

    def dispose(self) -> None:
        self.publisher.db.dispose()


def missing_replica_log(catalog: Catalog, sub: SubscriptionRecord, conn_id: str) -> ReplicationError:
    """The one line a subscriber whose replica's log the catalog does not know fails with: its server
    was moved to another connection, or its subscription recreated by hand. What to run is in the hint."""
    table = f"{sub.ss_schema}.{sub.ss_table}"
    others = [s.ss_server for s in catalog.subscriptions(sub.ss_item) if s.ss_server != sub.ss_server]
    taken = {known.db_address for name in others if (known := catalog.server(name)) is not None}
    taken.add(sub.ss_item.rpartition("@")[2])  # the publisher's own log
    elsewhere = sorted(
        r.snl_conn for r in catalog.logs() if r.snl_source.startswith(f"{table}@") and r.snl_conn not in taken
    )
    why = f"it was created on connection {', '.join(elsewhere)}" if elsewhere else "it was dropped or never created"
    calls = f"'{sub.ss_server}', '{sub.ss_item}', {sub.ss_type}"
    return ReplicationError(
        f"subscriber {sub.ss_server} of {sub.ss_item}: the catalog has no log for its replica {table} on connection "
        f"{conn_id} ({why}; was the server moved or its database recreated?)",
        f"subscribe it again: REPL_DROP_SNAPSHOT_SUB({calls}); REPL_CREATE_SNAPSHOT_SUB({calls}); "
        f"REPL_INIT_SNAPSHOT({calls})",
    )

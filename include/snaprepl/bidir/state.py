"""What every sync step of a publication works with (:class:`PublicationState`) and reports (:class:`Outcome`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from snaprepl.bidir import resolvers as R
from snaprepl.bidir.servers import server_conn
from snaprepl.bidir.sides import Side
from snaprepl.catalog.records import PublicationRecord, SubscriptionRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.errors import ReplicationError
from snaprepl.spark.session import session_of


@dataclass
class Outcome:
    """What one sync step did."""

    step: str
    server: str
    changes: int = 0
    applied: int = 0
    conflicts: int = 0
    skipped: int = 0
    rows: int = 0
    duration_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: What the step did in its own words (a collection's: resources copied, deleted, ...), instead of rows.
    summary: str = ""

    def __str__(self) -> str:
        if self.summary:
            head = {"init": "init of", "pull": "pull from"}.get(self.step, "push to")
            text = f"{head} {self.server}: {self.summary}"
        elif self.step == "init":
            text = f"init of {self.server}: {self.rows} rows copied"
        elif self.step == "pull":
            text = (
                f"pull from {self.server}: {self.changes} changes, {self.applied} applied, {self.conflicts} conflicts"
            )
        else:
            text = f"push to {self.server}: {self.changes} changes, {self.applied} applied"
            if self.skipped:
                text += f", {self.skipped} waiting for the subscriber's own changes to be pulled"
        return f"{text} ({self.duration_s:.1f} s)" + "".join(f"; {n}" for n in self.notes)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


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
            raise ReplicationError(f"the log of {server}'s replica of {self.item} is missing")
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


def loaded_servers(catalog: Catalog, item: str) -> list[str]:
    """The subscribers of ``item`` that have loaded it (a whole sync pulls from and pushes to them)."""
    return [s.ss_server for s in catalog.subscriptions(item) if s.ss_init_state == "done"]


def record_step_succeeded(catalog: Catalog, item: str, server: str) -> None:
    """Record that a sync step of ``item`` with ``server`` succeeded."""
    catalog.update_subscription(server, item, ss_last_status="succeeded", ss_last_error=None)


def record_sync_succeeded(catalog: Catalog, item: str) -> None:
    """Record that a sync job of ``item`` succeeded (its latest sync activity)."""
    catalog.update_publication(item, sp_last_status="succeeded", sp_last_error=None, sp_last_sync_at=utcnow())

"""The verify tasks of a snapshot's verify DAG and of a publication's (a verify schedule, off by
default; one task per subscriber's replica): the same job as ``snaprepl verify`` (spark-submit or
connect mode), its differences as the metric ``snaprepl.verify.differences``; differences found are
alerted by the submission (and fail nothing: the task succeeds with its outcome as XCom)."""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseOperator, Context

from snaprepl.airflow.metrics import verify_metrics
from snaprepl.catalog.store import Catalog
from snaprepl.errors import SnapshotNotFound
from snaprepl.settings import Settings
from snaprepl.submit.verify import submit_verify
from snaprepl.verify.model import VerifyRequest
from snaprepl.verify.replicas import replica_of


class SnapshotVerifyOperator(BaseOperator):
    """Verify one snapshot (``snapshot``: its SN_NAME) against its source; writes nothing."""

    template_fields = ("snapshot",)
    ui_color = "#fff2cc"

    def __init__(self, *, snapshot: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.snapshot = snapshot

    def execute(self, context: Context) -> dict[str, Any]:
        settings = Settings.load()
        catalog = Catalog.open(settings)
        if catalog.snapshot(self.snapshot) is None:
            raise SnapshotNotFound(f"there is no snapshot {self.snapshot}", "`snaprepl status` lists the snapshots")
        return _verified(self, self.snapshot, catalog, settings)


class ReplicaVerifyOperator(BaseOperator):
    """Verify server ``server``'s replica of publication ``item`` against the publisher's table; writes
    nothing (the replica's name is looked up when the task runs, not when the DAG is parsed)."""

    template_fields = ("item", "server")
    ui_color = "#fff2cc"

    def __init__(self, *, item: str, server: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.item, self.server = item, server

    def execute(self, context: Context) -> dict[str, Any]:
        settings = Settings.load()
        catalog = Catalog.open(settings)
        replica = replica_of(catalog, self.item, self.server)
        if replica is None:
            raise SnapshotNotFound(
                f"server {self.server} has no replica of {self.item}", "`snaprepl status` lists the replicas"
            )
        return _verified(self, replica.name, catalog, settings)


def _verified(task: BaseOperator, copy: str, catalog: Catalog, settings: Settings) -> dict[str, Any]:
    """Run the verify job of ``copy``; its metric; the outcome as XCom (differences alert, fail nothing)."""
    request = VerifyRequest.configured(copy, settings)
    outcome = submit_verify(request, catalog, settings)
    task.log.info("%s", outcome)
    verify_metrics(outcome.to_dict())
    return outcome.to_json()

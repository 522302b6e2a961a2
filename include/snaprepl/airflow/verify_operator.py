"""The verify task of a snapshot's verify DAG (a snapshot with a verify schedule, off by default):
the same job as ``snaprepl verify`` (spark-submit or connect mode), its differences as the metric
``snaprepl.verify.differences``; differences found are alerted by the submission (and fail nothing:
the task succeeds with its outcome as XCom)."""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseOperator, Context

from snaprepl.airflow.metrics import verify_metrics
from snaprepl.catalog.store import Catalog
from snaprepl.errors import SnapshotNotFound
from snaprepl.settings import Settings
from snaprepl.submit.verify import submit_verify
from snaprepl.verify.model import VerifyRequest


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
        request = VerifyRequest(
            snapshot=self.snapshot,
            commit_rows=settings.refresh_commit_rows,
            tolerance_minutes=settings.snp_repl_tolerance_offset,
        )
        outcome = submit_verify(request, catalog, settings)
        self.log.info("%s", outcome)
        verify_metrics(outcome.to_dict())
        return outcome.to_json()

"""A sync job's steps with independent subscribers (bidir/steps.py), the staleness rules
(ops/staleness.py) and the sync job's ``--reinit-detached`` flag, without services."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from snaprepl.catalog.records import PublicationRecord, SubscriptionRecord
from snaprepl.errors import DatabaseUnreachable, ReplicationError, SnapshotBusy
from snaprepl.ops.staleness import detaches, stale_after, subscriber_is_stale
from snaprepl.publications.outcome import Outcome
from snaprepl.publications.request import SyncRequest
from snaprepl.publications.steps import run_steps
from snaprepl.settings import Settings
from snaprepl.spark.job_args import job_argv, parse_job_argv
from tests.support.dag_factory_fakes import NOW


class Publications:
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    def update_publication(self, item: str, **values: Any) -> None:
        self.updates.append(values)


def steps_failing(failing: dict[tuple[str, str], Exception]) -> tuple[list[tuple[str, str]], Any]:
    ran: list[tuple[str, str]] = []

    def step(kind: str, server: str) -> Outcome:
        ran.append((kind, server))
        if (kind, server) in failing:
            raise failing[(kind, server)]
        return Outcome(kind, server)

    return ran, step


def test_a_failing_subscriber_gets_no_push_and_every_other_step_runs_then_one_line_each() -> None:
    catalog = Publications()
    ran, step = steps_failing({("pull", "b"): DatabaseUnreachable("b is down"), ("push", "c"): ValueError("bad\nrow")})

    with pytest.raises(ReplicationError) as failed:
        run_steps(catalog, "t@pub", ["pull", "push"], ["a", "b", "c"], step)  # type: ignore[arg-type]

    assert ran == [("pull", "a"), ("pull", "b"), ("pull", "c"), ("push", "a"), ("push", "c")]
    assert str(failed.value).splitlines() == [
        "t@pub: subscriber b failed its pull (1 of 3 synced): b is down",
        "t@pub: subscriber c failed its push (1 of 3 synced): bad row",
    ]
    assert catalog.updates[-1]["sp_last_status"] == "failed"


def test_one_subscriber_keeps_its_own_error_and_a_shared_class_is_kept() -> None:
    _, step = steps_failing({("pull", "a"): SnapshotBusy("busy")})
    with pytest.raises(SnapshotBusy, match=r"^busy$"):
        run_steps(Publications(), "t@pub", ["pull", "push"], ["a"], step)  # type: ignore[arg-type]
    _, step = steps_failing({("pull", "a"): SnapshotBusy("busy"), ("pull", "b"): SnapshotBusy("busy")})
    with pytest.raises(SnapshotBusy, match="subscriber a failed its pull"):
        run_steps(Publications(), "t@pub", ["pull", "push"], ["a", "b"], step)  # type: ignore[arg-type]
    catalog = Publications()
    _, step = steps_failing({})
    assert len(run_steps(catalog, "t@pub", ["pull", "push"], ["a", "b"], step)) == 4  # type: ignore[arg-type]
    assert catalog.updates[-1]["sp_last_status"] == "succeeded"


def test_stale_thresholds_and_detach_rules_come_from_the_publication_else_the_settings() -> None:
    settings = Settings(stale_after_hours=5)
    own = PublicationRecord(sp_item="t@p", sp_type=2, sp_server="p", sp_created_at=NOW, sp_stale_after_hours=1)
    plain = PublicationRecord(sp_item="t@p", sp_type=2, sp_server="p", sp_created_at=NOW)
    assert stale_after(own, settings) == timedelta(hours=1) and stale_after(plain, settings) == timedelta(hours=5)
    assert not detaches(plain, settings) and detaches(plain, Settings(detach_stale=True))
    never = PublicationRecord(sp_item="t@p", sp_type=2, sp_server="p", sp_created_at=NOW, sp_detach_stale=0)
    assert not detaches(never, Settings(detach_stale=True))
    sub = SubscriptionRecord(
        ss_server="s", ss_item="t@p", ss_type=2, ss_created_at=NOW - timedelta(days=9), ss_init_state="done",
        ss_last_push_at=NOW - timedelta(hours=2),
    )  # fmt: skip
    assert subscriber_is_stale(sub, own, settings, NOW) and not subscriber_is_stale(sub, plain, settings, NOW)
    fresh = SubscriptionRecord(ss_server="s", ss_item="t@p", ss_type=2, ss_created_at=NOW, ss_init_state="done")
    assert not subscriber_is_stale(fresh, own, settings, NOW + timedelta(minutes=30))
    with pytest.raises(Exception, match="stale_after_hours"):
        Settings(stale_after_hours=0)


def test_the_sync_job_hears_reinit_detached() -> None:
    def heard(request: SyncRequest) -> SyncRequest:
        return parse_job_argv(SyncRequest, job_argv(request, "cat"), prog="sync", description="")[0]

    request = SyncRequest.configured("push", "t@p", Settings(reinit_detached=True), server="s", rows_per_commit=10)
    assert "--reinit-detached" in job_argv(request, "cat") and heard(request) == request
    assert heard(SyncRequest.configured("sync", "t@p", Settings(), rows_per_commit=10)).reinit_detached is False

"""Logs stay bounded (issue 22): which copy holds a log's purge back, as ``snaprepl status`` and the
Replication page report it, and the page's log rows (airflow/ui/data.py) for the copies it shows.

The whole path against real databases (a subscriber gone, detached, the purge going past it) is
tests/integration/bidir/test_stale_subscribers.py."""

from __future__ import annotations

from datetime import datetime

from snaprepl.airflow.ui.data import log_rows
from snaprepl.catalog.records import SnapshotRecord, SubscriptionRecord
from snaprepl.reporting.log_bounds import describe_holder, purge_holder
from snaprepl.reporting.render import render_text
from snaprepl.reporting.runs import iso

T0, T1 = datetime(2026, 1, 1, 10), datetime(2026, 1, 1, 12)
SOURCE = "public.t@src"


def _snapshot(name: str, last_ts: datetime | None, needs_complete: str | None = None) -> SnapshotRecord:
    return SnapshotRecord(
        sn_name=name, sn_query="SELECT * FROM t", sn_source_conn="src", sn_dest_conn="dst", sn_dest_schema="main",
        sn_dest_table=name, sn_created_at=T0, sn_last_ts=last_ts, sn_is_incremental=1, sn_source_table=SOURCE,
        sn_needs_complete=needs_complete,
    )  # fmt: skip


def _subscriber(server: str, pushed: datetime | None, detached: datetime | None = None) -> SubscriptionRecord:
    return SubscriptionRecord(
        ss_server=server, ss_item=SOURCE, ss_type=2, ss_created_at=T0, ss_last_push_ts=pushed, ss_detached_at=detached
    )


def test_the_oldest_snapshot_holds_a_one_way_log_and_one_needing_a_complete_refresh_does_not() -> None:
    snapshots = [_snapshot("a", T1), _snapshot("b", T0), _snapshot("gone", None, needs_complete="purged past it")]
    holder = purge_holder(SOURCE, snapshots, [])
    assert holder == {"kind": "snapshot", "name": "b", "since": iso(T0)}
    assert describe_holder(holder) == f"b (SN_LAST_TS {iso(T0)})"
    never = purge_holder(SOURCE, [*snapshots, _snapshot("new", None)], [])
    assert never == {"kind": "snapshot", "name": "new", "since": None}
    assert describe_holder(never) == "new (never refreshed)"
    assert purge_holder("public.other@src", snapshots, []) is None, "another table's snapshots hold nothing"


def test_a_detached_subscriber_stops_holding_the_publishers_log() -> None:
    subscribers = [_subscriber("lite", T1), _subscriber("gone", T0)]
    holder = purge_holder(SOURCE, [], subscribers)
    assert holder == {"kind": "subscriber", "name": "gone", "since": iso(T0)}
    assert describe_holder(holder) == f"subscriber gone (pushed up to {iso(T0)})"
    detached = [subscribers[0], _subscriber("gone", T0, detached=T1)]
    assert purge_holder(SOURCE, [], detached) == {"kind": "subscriber", "name": "lite", "since": iso(T1)}
    assert purge_holder(SOURCE, [], [_subscriber("gone", T0, detached=T1)]) is None


def _log(source: str, holder: dict | None, backlog: dict) -> dict:
    return {
        "source": source, "kind": "plain", "rlog": "RLOG_t", "key_columns": ["id"], "purged_before": None,
        "purge_held_by": holder, "purge_waits_for": describe_holder(holder), "backlog": backlog,
        "rows": backlog.get("rows"), "oldest_entry": backlog.get("oldest_snaptime"),
    }  # fmt: skip


def test_the_page_lists_the_logs_of_the_copies_shown_with_size_age_and_holder() -> None:
    held = {"kind": "subscriber", "name": "gone", "since": iso(T0)}
    logs = [
        _log("public.pub@src", held, {"rows": 7, "oldest_snaptime": iso(T0), "error": None}),
        _log(SOURCE, None, {"rows": None, "oldest_snaptime": None, "error": "OperationalError: down"}),
        _log("public.hidden@src", None, {"rows": 1, "oldest_snaptime": None, "error": None}),
    ]
    snapshots = [{"name": "s1", "source": SOURCE}, {"name": "s2", "source": SOURCE}]
    rows = log_rows(logs, snapshots, [{"item": "public.pub@src"}])
    shown = [(r["source"], r["copies"]) for r in rows]
    assert shown == [("public.pub@src", ["public.pub@src"]), (SOURCE, ["s1", "s2"])], "the hidden log is left out"
    assert rows[0]["rows"] == 7 and rows[0]["oldest_entry"] == iso(T0) and rows[0]["purge_held_by"] == held
    assert rows[1]["error"] == "OperationalError: down", "an unreadable log says why"
    text = render_text({"catalog": "c", "snapshot_logs": logs, "snapshots": [], "servers": [], "publications": [],
                        "conflicts": []})  # fmt: skip
    assert f"subscriber gone (pushed up to {iso(T0)})" in text

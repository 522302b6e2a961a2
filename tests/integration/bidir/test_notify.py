"""Losing rows are told to their owners through Airflow notifiers: the log, e-mail over a real SMTP
server, or a notifier of the user's own; each conflict once."""

from __future__ import annotations

import dataclasses
import datetime
import email
import email.policy
import json
import os
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from tests.support import notifiers
from tests.support.bidir import Servers, change
from tests.support.smtp import Inbox, smtp_server

__all__ = ["smtp_server"]  # the fixture


LEDGER_ROW = {
    "CF_TYPE": "U",
    "CF_ORIGIN": "bd_my",
    "CF_KEY": "[7]",
    "CF_INCOMING": "{}",
    "CF_CURRENT": None,
    "CF_RESOLVER": None,
    "CF_DECISION": 1,
    "CF_LOSER": "{}",
    "CF_AT": datetime.datetime(2026, 1, 1),
    "CF_NOTIFIED": False,
    "CF_RUN_ID": "another-run",
    "CF_ENTRY": "another-entry",
}


def one_conflict(servers: Servers, items: Callable[..., str]) -> str:
    """A publication whose next sync meets one update conflict (the publisher wins by default)."""
    table = items([(1, "apple", "1.00")])
    change(servers.pub, f"UPDATE {table} SET price = ? WHERE item_id = ?", "2.00", 1)
    change(servers.my, f"UPDATE {table} SET price = ?, name = ? WHERE item_id = ?", "3.00", "mine", 1)
    return table


def update(table: str, catalog: Any, settings: Any, syncer: Any) -> Any:
    from snaprepl.api.script import run_script

    [result] = run_script(
        f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)", catalog=catalog, settings=settings, syncer=syncer
    )
    return result


def test_email_notification_names_the_losing_row(
    servers: Servers, items: Callable[..., str], catalog: Any, settings: Any, syncer: Any, smtp_server: Inbox
) -> None:
    table = one_conflict(servers, items)
    by_email = dataclasses.replace(
        settings, conflict_notifier="email", conflict_email_to="owner@example.com", smtp_conn_id="test_smtp"
    )

    result = update(table, catalog, by_email, syncer)

    assert result.notified >= 1
    [message] = smtp_server.messages
    assert message.rcpt_tos == ["owner@example.com"]
    mail = email.message_from_bytes(message.content, policy=email.policy.default)
    body = mail.get_body(("html", "plain")).get_content()
    assert mail["Subject"].startswith("snaprepl: ")
    assert f"public.{table}@bd_pub" in body and "publisher wins" in body and "mine" in body
    assert all(c["CF_NOTIFIED"] for c in catalog.conflicts(f"public.{table}@bd_pub"))
    assert update(table, catalog, by_email, syncer).notified == 0, "a conflict is notified once"
    assert len(smtp_server.messages) == 1


def test_a_notifier_of_ones_own_and_the_log(
    servers: Servers, items: Callable[..., str], catalog: Any, settings: Any, syncer: Any, caplog: Any
) -> None:
    table = one_conflict(servers, items)
    own = dataclasses.replace(settings, conflict_notifier="tests.support.notifiers:Collecting")
    notifiers.RECEIVED.clear()

    update(table, catalog, own, syncer)

    [conflict] = [c for c in notifiers.RECEIVED if c["CF_ITEM"] == f"public.{table}@bd_pub"]
    assert Decimal(json.loads(conflict["CF_LOSER"])["row"]["price"]) == Decimal("3.00")
    # The log notifier (the default) on the next conflict.
    change(servers.pub, f"UPDATE {table} SET price = ? WHERE item_id = ?", "4.00", 1)
    change(servers.lite, f"UPDATE {table} SET price = ? WHERE item_id = ?", "5.00", 1)
    with caplog.at_level("WARNING", logger="snaprepl.conflicts"):
        update(table, catalog, settings, syncer)
    assert f"public.{table}@bd_pub: 'U' conflict on key [1]" in caplog.text


def test_a_sync_notifies_its_own_publications_conflicts_only(
    servers: Servers, items: Callable[..., str], catalog: Any, settings: Any, syncer: Any
) -> None:
    table = one_conflict(servers, items)
    other = "public.another_publication@bd_pub"
    catalog.record_conflicts(other, "bd_my", [{**LEDGER_ROW, "CF_ITEM": other}])
    own = dataclasses.replace(settings, conflict_notifier="tests.support.notifiers:Collecting")
    notifiers.RECEIVED.clear()

    result = update(table, catalog, own, syncer)

    assert result.notified == 1 and "1 conflicts notified" in str(result)
    assert {c["CF_ITEM"] for c in notifiers.RECEIVED} == {f"public.{table}@bd_pub"}
    [waiting] = catalog.conflicts(other, unnotified=True)
    assert waiting["CF_KEY"] == "[7]", "another publication's conflict waits for that publication's sync"


def test_a_notifier_that_cannot_be_built_is_a_clear_error(catalog: Any, settings: Any) -> None:
    from snaprepl.errors import InvalidArgument
    from snaprepl.publications.notify import build_notifier

    with pytest.raises(InvalidArgument, match="cannot be built"):
        build_notifier(dataclasses.replace(settings, conflict_notifier="tests.support.notifiers:Missing"))
    with pytest.raises(InvalidArgument, match="conflict_email_to"):
        build_notifier(dataclasses.replace(settings, conflict_notifier="email", conflict_email_to=""))


def test_alerts_go_to_the_notifier_on_failure_and_on_lag_over_the_threshold_only(
    catalog: Any, settings: Any, smtp_server: Inbox
) -> None:
    from snaprepl.catalog import run_history
    from snaprepl.catalog.records import HistoryRecord, utcnow
    from snaprepl.errors import RefreshFailed, SnapshotBusy
    from snaprepl.submit.alerts import alerting

    copy = f"public.alerted_{os.getpid()}_{id(smtp_server)}@nowhere"
    by_email = dataclasses.replace(
        settings,
        conflict_notifier="email",
        conflict_email_to="ops@example.com",
        smtp_conn_id="test_smtp",
        lag_alert_minutes=10,
    )

    def ran(outcome: str, lag: float | None, error: str | None = None) -> None:
        now = utcnow()
        run = HistoryRecord(copy, "incremental", now, now, outcome, rh_lag_seconds=lag, rh_backlog=7, rh_error=error)
        run_history.record(catalog, run)

    def bodies() -> list[tuple[str, str]]:
        mails = [email.message_from_bytes(m.content, policy=email.policy.default) for m in smtp_server.messages]
        return [(m["Subject"], m.get_body(("html", "plain")).get_content()) for m in mails]

    with alerting(catalog, by_email, copy, "refresh"):
        ran("ok", 60.0)  # 1 minute behind: under the threshold
    with alerting(catalog, dataclasses.replace(by_email, lag_alert_minutes=0), copy, "refresh"):
        ran("ok", 99_999.0)  # lag alerts off
    with pytest.raises(SnapshotBusy), alerting(catalog, by_email, copy, "refresh"):
        raise SnapshotBusy("busy with another run")  # no run, no failure
    assert smtp_server.messages == []

    with alerting(catalog, by_email, copy, "refresh"):
        ran("ok", 900.0)
    [(subject, body)] = bodies()
    assert subject.startswith("snaprepl alert: ") and f"incremental refresh of {copy}: lag 15.0 min" in body
    assert "7 log rows pending" in body and [m.rcpt_tos for m in smtp_server.messages] == [["ops@example.com"]]

    with pytest.raises(RefreshFailed), alerting(catalog, by_email, copy, "refresh"):
        ran("failed", None, "PSQLException: boom")
        raise RefreshFailed("PSQLException: boom")
    assert len(bodies()) == 2 and f"incremental refresh of {copy} failed" in bodies()[1][1]
    assert bodies()[1][1].count("boom") == 1, "a recorded failure is told once"
    with pytest.raises(RefreshFailed), alerting(catalog, by_email, copy, "refresh of it"):
        raise RefreshFailed("the job died: postgresql://u:pw@h/db")  # died before recording
    assert "refresh of it failed: the job died: postgresql://u:***@h/db" in bodies()[2][1]


def test_a_group_pass_alerts_once_for_the_group_on_lag_and_on_failure(
    catalog: Any, settings: Any, smtp_server: Inbox
) -> None:
    """Its members' runs of one pass: the group's lag is their largest, told once; a failure recorded by
    every member is told once, as the group's."""
    from snaprepl.catalog import run_history
    from snaprepl.catalog.records import GroupRecord, HistoryRecord, SnapshotRecord, utcnow
    from snaprepl.errors import RefreshFailed
    from snaprepl.submit.alerts import group_alerting

    group = f"alerted{os.getpid()}x{id(smtp_server)}@nowhere"
    catalog.add_group(
        GroupRecord(group, "nowhere", "main", "src", "public", utcnow(), sg_last_status=None), AssertionError
    )
    members = [f"main.{t}_{group}" for t in ("orders", "lines")]
    for member in members:
        record = SnapshotRecord(member, "SELECT 1", "src", "nowhere", "main", member, utcnow(), sn_is_incremental=1)
        catalog.add_snapshot(record, AssertionError("exists"), group)
    by_email = dataclasses.replace(
        settings, conflict_notifier="email", conflict_email_to="ops@example.com", smtp_conn_id="test_smtp",
        lag_alert_minutes=10,
    )  # fmt: skip

    def ran(outcome: str, lags: list[float | None], error: str | None = None) -> None:
        for member, lag in zip(members, lags, strict=True):
            now = utcnow()
            run = HistoryRecord(member, "incremental", now, now, outcome, rh_lag_seconds=lag, rh_backlog=3)
            run_history.record(catalog, dataclasses.replace(run, rh_error=error))

    with group_alerting(catalog, by_email, group):
        ran("ok", [60.0, 120.0])
    assert smtp_server.messages == []
    with group_alerting(catalog, by_email, group):
        ran("ok", [60.0, 900.0])
    with pytest.raises(RefreshFailed), group_alerting(catalog, by_email, group):
        ran("failed", [None, None], "group refresh failed: boom")
        raise RefreshFailed("group refresh failed: boom")
    texts = [email.message_from_bytes(m.content, policy=email.policy.default) for m in smtp_server.messages]
    bodies = [m.get_body(("html", "plain")).get_content() for m in texts]
    assert len(bodies) == 2, bodies
    assert f"snapshot group {group}: lag 15.0 min" in bodies[0] and "6 log rows pending" in bodies[0]
    assert f"refresh of snapshot group {group} failed" in bodies[1] and bodies[1].count("boom") == 1

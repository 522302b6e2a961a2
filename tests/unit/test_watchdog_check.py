"""The watchdog's check against an in-memory catalog: each condition alerted once when it starts and
once when it clears; a check that cannot tell which DAGs are paused clears no paused condition."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from snaprepl.catalog.records import HistoryRecord
from snaprepl.catalog.watchdog import Condition, Watched
from snaprepl.common.dag_names import group_dag_id, snapshot_dag_id
from snaprepl.ops import watchdog
from snaprepl.settings import Settings
from tests.support.dag_factory_fakes import NOW, FakeCatalog, group, snapshot


class WatchedCatalog(FakeCatalog):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state: dict[str, Watched] = {}
        self.runs: dict[tuple[str, str | None], HistoryRecord] = {}

    def watched(self) -> dict[str, Watched]:
        return dict(self.state)

    def start_watching(self, condition: Condition, since: datetime) -> None:
        self.state[condition.key] = Watched(condition, since)

    def stop_watching(self, key: str) -> None:
        self.state.pop(key)

    def last_runs(self) -> dict[tuple[str, str | None], HistoryRecord]:
        return self.runs

    def history(self, copy: str | None = None, **_: Any) -> list[HistoryRecord]:
        return [r for r in self.runs.values() if r.rh_copy == copy]


def test_conditions_alert_once_when_they_start_and_once_when_they_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[list[str]] = []
    monkeypatch.setattr(watchdog, "notify_alerts", lambda settings, alerts: sent.append(alerts))
    name = "main.copy@dst"
    fresh = snapshot(name, sn_last_status="succeeded", sn_last_refresh_at=NOW)
    catalog = WatchedCatalog([fresh])
    catalog.runs[(name, None)] = HistoryRecord(
        rh_copy=name, rh_kind="incremental", rh_started=NOW, rh_ended=NOW, rh_outcome="ok", rh_lag_seconds=1200.0
    )
    settings = Settings(lag_alert_minutes=10, stale_after_hours=1)
    dag = snapshot_dag_id(name)

    first = watchdog.check(catalog, settings, paused={dag}, now=NOW + timedelta(minutes=5))  # type: ignore[arg-type]
    again = watchdog.check(catalog, settings, paused={dag}, now=NOW + timedelta(minutes=10))  # type: ignore[arg-type]

    assert sorted(c.condition for c in first.started) == ["lag", "paused"] and again.started == []
    assert [len(s) for s in sent] == [2, 0] and all(line.startswith(f"{name}: ") for line in sent[0])
    unknown = watchdog.check(catalog, settings, paused=None, now=NOW + timedelta(minutes=15))  # type: ignore[arg-type]
    assert unknown.cleared == [] and "paused:" + name in catalog.state
    later = NOW + timedelta(hours=3)  # no refresh since: stale; unpaused; lag still over
    cleared = watchdog.check(catalog, settings, paused=set(), now=later)  # type: ignore[arg-type]
    assert [c.key for c in cleared.cleared] == [f"paused:{name}"] and [c.condition for c in cleared.started] == [
        "stale"
    ]
    assert any("paused cleared" in line for line in sent[-1]) and any(": stale: " in line for line in sent[-1])


def test_a_lagging_group_alerts_once_for_the_group_not_per_member(monkeypatch: pytest.MonkeyPatch) -> None:
    """A group's lag is its members' largest at the end of their last runs; over ``lag_alert_minutes``
    it is one condition of the group (its members' own lags are not alerted), started and cleared once;
    a group's paused DAG is the group's condition too."""
    sent: list[list[str]] = []
    monkeypatch.setattr(watchdog, "notify_alerts", lambda settings, alerts: sent.append(alerts))
    members = ["main.orders@dst", "main.lines@dst"]
    catalog = WatchedCatalog(
        [snapshot(m, sn_last_status="succeeded", sn_last_refresh_at=NOW) for m in members],
        groups={group("sales@dst"): members},
    )

    def ran(lags: list[float]) -> None:
        for member, lag in zip(members, lags, strict=True):
            catalog.runs[(member, None)] = HistoryRecord(
                rh_copy=member, rh_kind="incremental", rh_started=NOW, rh_ended=NOW, rh_outcome="ok", rh_lag_seconds=lag
            )

    settings, dag = Settings(lag_alert_minutes=10), group_dag_id("sales@dst")
    check = lambda paused: watchdog.check(catalog, settings, paused=paused, now=NOW + timedelta(minutes=1))  # type: ignore[arg-type]  # noqa: E731
    ran([30.0, 1200.0])
    first, again = check({dag}), check({dag})
    assert sorted((c.condition, c.copy) for c in first.started) == [("lag", "sales@dst"), ("paused", "sales@dst")]
    assert "lag 20.0 min" in sent[0][0] and again.started == [] and sent[1] == []
    ran([0.0, 0.0])
    cleared = check(set())
    assert sorted(c.key for c in cleared.cleared) == ["lag:sales@dst", "paused:sales@dst"] and cleared.started == []
    assert len(sent[2]) == 2 and all("cleared" in line for line in sent[2])

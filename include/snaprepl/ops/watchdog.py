"""The freshness watchdog: what the ``snaprepl_watchdog`` DAG checks every few minutes, whether runs
end or not (lag alerts of :mod:`snaprepl.submit.alerts` come only when a run ends).

Conditions, per copy: ``stale`` (no successful refresh, pull or push for the stale threshold, see
:mod:`snaprepl.ops.staleness`), ``lag`` (its last run ended lagging over ``lag_alert_minutes``; a
snapshot group's members lag as one: the group, by the largest of their lags), ``paused`` (its DAG
is paused, as Airflow's REST API says; a group's DAG), and per log ``backlog`` (more rows than
``log_backlog_alert_rows``, or an oldest entry older than the stale threshold). Each condition is
alerted once when it starts and once when it clears, through the notifier alerts go to; SYS_WATCHDOG
keeps which ones hold. A condition that could not be checked this time (a source that does not
answer, no REST API) is neither started nor cleared.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from snaprepl.catalog.records import HistoryRecord, LogRecord, utcnow
from snaprepl.catalog.run_history import group_lag
from snaprepl.catalog.store import Catalog
from snaprepl.catalog.watchdog import Condition
from snaprepl.common.dag_names import group_dag_id, publication_dag_id, snapshot_dag_id
from snaprepl.database.sessions import Database
from snaprepl.ops.staleness import (
    snapshot_is_stale,
    snapshot_last_success,
    stale_after,
    subscriber_is_stale,
    subscriber_last_success,
)
from snaprepl.publications.notify import notify_alerts
from snaprepl.settings import Settings

log = logging.getLogger("snaprepl.watchdog")

CONDITIONS = ("stale", "lag", "paused", "backlog")


@dataclass
class WatchReport:
    """What one check found: the conditions that hold, those that started and cleared now."""

    holding: list[Condition] = field(default_factory=list)
    started: list[Condition] = field(default_factory=list)
    cleared: list[Condition] = field(default_factory=list)

    def __str__(self) -> str:
        return f"watchdog: {len(self.holding)} conditions hold ({len(self.started)} new, {len(self.cleared)} cleared)"


def check(catalog: Catalog, settings: Settings, *, paused: set[str] | None, now: datetime | None = None) -> WatchReport:
    """Check every snapshot, subscription and log; alert on what started and cleared since the last check.

    :param paused: ids of the paused DAGs (None: unknown, the ``paused`` conditions stay as they were).
    """
    now = now or utcnow()
    unknown: set[str] = set()  # condition-key prefixes this check could not settle
    if paused is None:
        unknown.add("paused:")
    found = {c.key: c for c in _conditions(catalog, settings, paused or set(), now, unknown)}
    watched = catalog.watched()
    report = WatchReport(holding=list(found.values()))
    report.started = [c for key, c in found.items() if key not in watched]
    report.cleared = [
        w.condition for key, w in watched.items() if key not in found and not any(key.startswith(u) for u in unknown)
    ]
    alerts = [f"{c.copy}{_on(c)}: {c.condition}: {c.detail}" for c in report.started]
    alerts += [f"{c.copy}{_on(c)}: {c.condition} cleared (was: {c.detail})" for c in report.cleared]
    notify_alerts(settings, alerts)  # first: an alert that could not be sent is sent again next time
    for condition in report.started:
        catalog.start_watching(condition, now)
    for condition in report.cleared:
        catalog.stop_watching(condition.key)
    return report


def _on(c: Condition) -> str:
    return f" with {c.server}" if c.server else ""


def _conditions(
    catalog: Catalog, settings: Settings, paused: set[str], now: datetime, unknown: set[str]
) -> Iterator[Condition]:
    runs, grouped = catalog.last_runs(), catalog.grouped_snapshots()
    for snapshot in catalog.snapshots():
        name = snapshot.sn_name
        if snapshot_is_stale(catalog, snapshot, settings, now):
            since = snapshot_last_success(catalog, snapshot)
            yield Condition("stale", name, None, f"no successful refresh since {since:%Y-%m-%d %H:%M} UTC")
        if name not in grouped:  # a member's lag is its group's
            yield from _lag(runs.get((name, None)), name, None, settings)
        if snapshot_dag_id(name) in paused:
            yield Condition("paused", name, None, f"DAG {snapshot_dag_id(name)} is paused: it refreshes nothing")
    yield from _groups(catalog, runs, grouped, settings, paused)
    for publication in catalog.publications():
        item = publication.sp_item
        if publication_dag_id(item) in paused:
            yield Condition("paused", item, None, f"DAG {publication_dag_id(item)} is paused: it syncs nothing")
        for sub in catalog.subscriptions(item):
            if subscriber_is_stale(sub, publication, settings, now):
                since = subscriber_last_success(sub)
                detail = f"no pull or push completed since {since:%Y-%m-%d %H:%M} UTC"
                yield Condition("stale", item, sub.ss_server, detail)
            yield from _lag(runs.get((item, sub.ss_server)), item, sub.ss_server, settings)
    for record in catalog.logs():
        yield from _backlog(catalog, record, settings, unknown)


def _groups(
    catalog: Catalog,
    runs: dict[tuple[str, str | None], HistoryRecord],
    grouped: dict[str, str],
    settings: Settings,
    paused: set[str],
) -> Iterator[Condition]:
    """Per snapshot group: ``lag`` (the largest of its members' lags at the end of their last runs over
    ``lag_alert_minutes``) and ``paused`` (its DAG: its members have none of their own)."""
    limit = settings.lag_alert_minutes * 60
    for group in catalog.groups():
        members = [runs[(m, None)] for m, g in grouped.items() if g == group.sg_name and (m, None) in runs]
        lag = group_lag(members)
        if limit and lag is not None and lag > limit:
            detail = f"lag {lag / 60:.1f} min at the end of its last refresh is over lag_alert_minutes = "
            yield Condition("lag", group.sg_name, None, detail + f"{settings.lag_alert_minutes}")
        if group_dag_id(group.sg_name) in paused:
            dag = group_dag_id(group.sg_name)
            yield Condition("paused", group.sg_name, None, f"DAG {dag} is paused: it refreshes none of its members")


def _lag(run: HistoryRecord | None, copy: str, server: str | None, settings: Settings) -> Iterator[Condition]:
    limit = settings.lag_alert_minutes * 60
    if run is not None and limit and run.rh_lag_seconds is not None and run.rh_lag_seconds > limit:
        detail = f"lag {run.rh_lag_seconds / 60:.1f} min at the end of its last run is over lag_alert_minutes = "
        yield Condition("lag", copy, server, detail + f"{settings.lag_alert_minutes}")


def _backlog(catalog: Catalog, record: LogRecord, settings: Settings, unknown: set[str]) -> Iterator[Condition]:
    """The log's rows over ``log_backlog_alert_rows``, or its oldest entry older than the stale threshold
    (the logs copies read: snapshot logs with snapshots, publishers' logs)."""
    publication = catalog.publication(record.snl_source)
    if publication is None and not catalog.snapshots_of_log(record.snl_source):
        return
    try:
        database = Database.for_conn_id(record.snl_conn)
        dialect = database.dialect
        snaptime = dialect.quote(dialect.log_columns.snaptime)
        with database.session() as session:
            rows, oldest = session.query(
                f"SELECT COUNT(*), MIN({snaptime}) FROM {dialect.qualified(record.snl_schema, record.snl_rlog)}"
            )[0]
            now = dialect.now_utc(session)
    except Exception as err:  # a source that does not answer: its condition stays as it was
        log.warning("watchdog: the log of %s could not be read: %s", record.snl_source, err)
        unknown.add(f"backlog:{record.snl_source}")
        return
    oldest = dialect.snaptime_value(oldest) if oldest is not None else None
    age = stale_after(publication, settings)
    if settings.log_backlog_alert_rows and rows > settings.log_backlog_alert_rows:
        detail = f"{rows} rows, over log_backlog_alert_rows = {settings.log_backlog_alert_rows}"
    elif oldest is not None and now - oldest > age:
        detail = f"its oldest entry is older than {age / timedelta(hours=1):g} h ({rows} rows)"
    else:
        return
    yield Condition("backlog", record.snl_source, None, detail)

"""Failure and lag alerts: what the submitter of a refresh or sync step tells the notifier when it ends.

A run that failed, or that ended with its copy lagging more than ``[snaprepl] lag_alert_minutes``
(0: no lag alerts), is sent to the notifier conflicts go to (``conflict_notifier``, see
:mod:`snaprepl.publications.notify`). The facts come from the history the job recorded; a job that died
before recording is reported from the error its submitter saw. A run that only found its copy busy
with another run is no failure. Alerting never hides the run's own outcome: a notifier that fails
is logged. A source transaction open over ``long_transaction_warn_minutes`` is reported once
(:mod:`snaprepl.submit.long_transactions`). A snapshot group's pass is one run: one alert when it
failed, one when the group ended lagging (its lag: the largest of its members' lags,
:func:`snaprepl.catalog.run_history.group_lag`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from snaprepl.catalog.records import HistoryRecord, utcnow
from snaprepl.catalog.run_history import clean_error, group_lag
from snaprepl.catalog.store import Catalog
from snaprepl.errors import SnapshotBusy
from snaprepl.publications.notify import notify_alerts
from snaprepl.settings import Settings
from snaprepl.submit.long_transactions import long_transaction_alerts

log = logging.getLogger("snaprepl.alerts")


def _what(run: HistoryRecord) -> str:
    if run.rh_kind in ("verify", "repair"):
        return f"{run.rh_kind} of {run.rh_copy}"
    if run.rh_server is None:
        return f"{run.rh_kind} refresh of {run.rh_copy}"
    return f"{run.rh_kind} of {run.rh_copy} with {run.rh_server}"


def alerts_for(runs: list[HistoryRecord], settings: Settings) -> list[str]:
    """The alerts ``runs`` call for: each failure, and each lag over the threshold."""
    alerts = [
        f"{_what(r)} failed at {r.rh_ended:%Y-%m-%d %H:%M:%S} UTC: {r.rh_error}"
        for r in runs
        if r.rh_outcome == "failed"
    ]
    alerts += [
        f"{_what(r)} found {r.rh_conflicts} differences between the copy and its source" for r in runs
        if r.rh_outcome == "differences"
    ]  # fmt: skip
    limit = settings.lag_alert_minutes * 60
    alerts += [
        f"{_what(r)}: lag {r.rh_lag_seconds / 60:.1f} min is over lag_alert_minutes = {settings.lag_alert_minutes} "
        f"({r.rh_backlog} log rows pending)"
        for r in runs
        if limit and r.rh_lag_seconds is not None and r.rh_lag_seconds > limit
    ]
    return alerts


@contextmanager
def alerting(
    catalog: Catalog,
    settings: Settings,
    copy: str,
    what: str,
    *,
    server: str | None = None,
    ignore: tuple[type[BaseException], ...] = (),
) -> Iterator[None]:
    """Around the submission of runs of ``copy`` (``what`` names them in an alert of a job that
    died unrecorded): alert on what they recorded, or on the error. ``ignore``: errors that are no
    failure (besides :class:`SnapshotBusy`)."""
    since = utcnow()
    failure: BaseException | None = None
    try:
        yield
    except BaseException as err:
        failure = None if isinstance(err, (SnapshotBusy, *ignore)) else err
        raise
    finally:
        _alert(catalog, settings, (copy, server, what), since, failure)


def _alert(
    catalog: Catalog,
    settings: Settings,
    target: tuple[str, str | None, str],
    since: datetime,
    failure: BaseException | None,
) -> None:
    copy, server, what = target
    try:
        runs = [r for r in catalog.history(copy, since=since) if server is None or r.rh_server == server]
        alerts = alerts_for(runs, settings)
        if failure is not None and not any(r.rh_outcome == "failed" for r in runs):
            alerts.append(f"{what} failed: {clean_error(failure)}")
        alerts += long_transaction_alerts(catalog, settings, copy, since)
        notify_alerts(settings, alerts)
    except Exception as err:  # the run's own outcome stands; the lost alert is logged
        log.error("alert about %s not sent: %s", what, clean_error(err))


def group_alerts(group: str, runs: list[HistoryRecord], settings: Settings, failure: BaseException | None) -> list[str]:
    """The alerts a pass of snapshot group ``group`` calls for (``runs``: its members' runs of the
    pass): one if it failed, one if the group ended lagging over the threshold."""
    failed = [r for r in runs if r.rh_outcome == "failed"]
    if failed or failure is not None:
        why = failed[0].rh_error if failed else clean_error(failure or "")
        return [f"refresh of snapshot group {group} failed: {why}"]
    lag, limit = group_lag(runs), settings.lag_alert_minutes * 60
    if not limit or lag is None or lag <= limit:
        return []
    pending = sum(r.rh_backlog or 0 for r in runs)
    return [
        f"snapshot group {group}: lag {lag / 60:.1f} min is over lag_alert_minutes = {settings.lag_alert_minutes} "
        f"({pending} log rows pending)"
    ]


@contextmanager
def group_alerting(catalog: Catalog, settings: Settings, group: str) -> Iterator[None]:
    """Around a pass of snapshot group ``group``: alert on what its members recorded, or on the error."""
    since = utcnow()
    failure: BaseException | None = None
    try:
        yield
    except BaseException as err:
        failure = None if isinstance(err, SnapshotBusy) else err
        raise
    finally:
        try:
            runs = [r for m in catalog.group_members(group) for r in catalog.history(m, since=since)]
            # A member's complete refresh (AS NONINCREMENTAL, a new member) is a job that alerts itself.
            if any(r.rh_kind == "complete" and r.rh_outcome == "failed" for r in runs):
                failure = None
            passed = [r for r in runs if r.rh_kind != "complete"]
            notify_alerts(settings, group_alerts(group, passed, settings, failure))
        except Exception as err:  # the run's own outcome stands; the lost alert is logged
            log.error("alert about snapshot group %s not sent: %s", group, clean_error(err))

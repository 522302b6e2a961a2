"""Metrics of snaprepl's tasks through Airflow's ``Stats`` (StatsD, Datadog or OpenTelemetry: whichever
``[metrics]`` configures; nothing when none is).

Every metric goes out twice, as Airflow does with its own: under its name with the tag
``copy=<copy>`` (InfluxDB-style StatsD, Datadog and OpenTelemetry carry tags; characters other than
``[a-zA-Z0-9_.-]`` become ``_``), and under its name followed by the copy's name made one segment of a
metric name (dots written ``__``; plain StatsD drops tags)::

    snaprepl.refresh.duration                 timing, ms     one refresh
    snaprepl.refresh.rows                     counter        rows copied, upserted and deleted
    snaprepl.refresh.lag_seconds              gauge          when the job measured the lag
    snaprepl.refresh.column_changes           counter        source columns a refresh followed (added, dropped, widened)
    snaprepl.log.backlog                      gauge          log rows the copy has still to apply, when measured
    snaprepl.sync.duration / .rows            timing, counter  one pull, push or initial load
    snaprepl.sync.conflicts                   counter        conflicts a pull met
    snaprepl.verify.differences               gauge          differences a verify found (0: equal)
    snaprepl.group.lag_seconds                gauge          a snapshot group's lag after its run: its members' largest

A sync step's copy is ``<publication>:<server>``; a snapshot group's is the group (``g@dst``), and each
of its members sends the refresh metrics too.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from airflow.sdk.observability.stats import Stats

log = logging.getLogger(__name__)
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_UNSAFE_TAG = re.compile(r"[^a-zA-Z0-9_.-]")


def metric_suffix(copy: str) -> str:
    """``copy`` as one segment of a metric name: dots would split it in StatsD's hierarchy (Airflow
    writes them ``__`` in its own names), other characters outside ``[a-zA-Z0-9_-]`` become ``_``."""
    return _UNSAFE.sub("_", copy.replace(".", "__"))


def tag_value(copy: str) -> str:
    """``copy`` as a tag's value: InfluxDB-style StatsD drops a metric whose name and tags hold anything
    but ``[a-zA-Z0-9_.-]`` (``@`` of ``table@conn`` among them), so the others become ``_``."""
    return _UNSAFE_TAG.sub("_", copy)


def _send(kind: str, name: str, value: Any, copy: str, tags: dict[str, str] | None = None) -> None:
    every_tag = {"copy": tag_value(copy), **(tags or {})}
    try:
        for stat, stat_tags in ((name, every_tag), (f"{name}.{metric_suffix(copy)}", tags or {})):
            if kind == "timing":
                Stats.timing(stat, value, tags=stat_tags)
            elif kind == "incr":
                Stats.incr(stat, count=value, tags=stat_tags)
            else:
                Stats.gauge(stat, value, tags=stat_tags)
    except Exception as err:  # metrics never fail the task that replicated
        log.warning("metric %s of %s not sent: %s", name, copy, err)


def _measured(outcome: dict[str, Any], copy: str, prefix: str) -> None:
    """Lag and backlog, when the job measured them."""
    lag = outcome.get("lag_seconds")
    if lag is not None:
        _send("gauge", f"snaprepl.{prefix}.lag_seconds", float(lag), copy)
    backlog = outcome.get("backlog", outcome.get("backlog_rows"))
    if backlog is not None:
        _send("gauge", "snaprepl.log.backlog", int(backlog), copy)


def refresh_metrics(outcome: dict[str, Any]) -> None:
    """The metrics of a refresh, from its outcome (:meth:`RefreshOutcome.to_dict`)."""
    copy = str(outcome["snapshot"])
    tags = {"kind": str(outcome.get("kind", ""))}
    _send("timing", "snaprepl.refresh.duration", timedelta(seconds=float(outcome.get("duration_s") or 0)), copy, tags)
    rows = sum(int(outcome.get(k) or 0) for k in ("rows_copied", "rows_upserted", "rows_deleted"))
    _send("incr", "snaprepl.refresh.rows", rows, copy, tags)
    followed = int(outcome.get("columns_followed") or 0)
    if followed:
        _send("incr", "snaprepl.refresh.column_changes", followed, copy)
    _measured(outcome, copy, "refresh")


def group_metrics(group: str, outcomes: Iterable[dict[str, Any]]) -> None:
    """The metrics of a snapshot group's run: each member's refresh metrics, and the group's lag (the
    largest of its members' lags after the group's incremental pass, when measured)."""
    lags = []
    for outcome in outcomes:
        refresh_metrics(outcome)
        if outcome.get("kind") == "incremental" and outcome.get("lag_seconds") is not None:
            lags.append(float(outcome["lag_seconds"]))
    if lags:
        _send("gauge", "snaprepl.group.lag_seconds", max(lags), group)


def sync_metrics(item: str, outcomes: Iterable[dict[str, Any]]) -> None:
    """The metrics of a sync step, from its outcomes (one per server)."""
    for outcome in outcomes:
        copy = f"{item}:{outcome['server']}"
        tags = {"step": str(outcome.get("step", ""))}
        duration = timedelta(seconds=float(outcome.get("duration_s") or 0))
        _send("timing", "snaprepl.sync.duration", duration, copy, tags)
        rows = int(outcome.get("rows") or 0) + int(outcome.get("applied") or 0)
        _send("incr", "snaprepl.sync.rows", rows, copy, tags)
        if outcome.get("step") == "pull":
            _send("incr", "snaprepl.sync.conflicts", int(outcome.get("conflicts") or 0), copy, tags)
        _measured(outcome, copy, "sync")


def verify_metrics(outcome: dict[str, Any]) -> None:
    """The metrics of a verify or repair, from its outcome (:meth:`VerifyOutcome.to_dict`)."""
    found = sum(int(outcome.get(k) or 0) for k in ("missing", "extra", "different"))
    _send("gauge", "snaprepl.verify.differences", found, str(outcome["copy"]))

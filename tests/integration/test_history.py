"""The run history (SYS_REPL_HISTORY): recording runs, reading them newest first, purging by age."""

from __future__ import annotations

from datetime import datetime, timedelta

from snaprepl.catalog.records import HistoryRecord
from snaprepl.catalog.store import Catalog


def _run(copy: str, started: datetime, **values: object) -> HistoryRecord:
    fields: dict[str, object] = {
        "rh_copy": copy,
        "rh_kind": "incremental",
        "rh_started": started,
        "rh_ended": started + timedelta(seconds=3),
        "rh_outcome": "ok",
        **values,
    }
    return HistoryRecord(**fields)  # type: ignore[arg-type]


def test_runs_come_back_newest_first_and_purge_takes_only_old_ones(catalog: Catalog, unique_name: str) -> None:
    copy, other = f"s.{unique_name}@pg", f"s.{unique_name}_b@pg"
    now = datetime(2026, 11, 24, 12, 0, 0, 123456)
    old = catalog.record_run(_run(copy, now - timedelta(days=40), rh_outcome="failed", rh_error="boom"))
    catalog.record_run(_run(copy, now - timedelta(days=1), rh_rows_in=5, rh_rows_out=4, rh_rows_deleted=1))
    catalog.record_run(_run(copy, now, rh_kind="complete", rh_lag_seconds=0.0, rh_backlog=0, rh_dag_run_id="r1"))
    catalog.record_run(_run(other, now, rh_kind="pull", rh_server="sub1", rh_conflicts=2, rh_outcome="idle"))

    runs = catalog.history(copy)
    assert [r.rh_started for r in runs] == [now, now - timedelta(days=1), now - timedelta(days=40)]
    assert runs[0].rh_kind == "complete" and runs[0].rh_dag_run_id == "r1" and runs[0].rh_lag_seconds == 0.0
    assert (runs[1].rh_rows_in, runs[1].rh_rows_out, runs[1].rh_rows_deleted) == (5, 4, 1)
    assert runs[2].rh_id == old and runs[2].rh_error == "boom" and runs[2].duration_s == 3.0
    assert [r.rh_started for r in catalog.history(copy, limit=1)] == [now]
    assert len(catalog.history(copy, since=now - timedelta(days=2))) == 2
    assert catalog.last_runs()[(other, "sub1")].rh_conflicts == 2

    assert catalog.purge_history(now - timedelta(days=30)) >= 1
    assert [r.rh_id for r in catalog.history(copy)][-1] != old, "the 40-day-old run is gone"
    assert len(catalog.history(copy)) == 2 and len(catalog.history(other)) == 1, "newer runs stay"


def test_lag_is_the_source_clock_minus_the_newest_applied_snaptime(pg_db, catalog: Catalog, unique_name: str) -> None:
    from snaprepl import api
    from snaprepl.catalog.run_history import log_backlog

    pg_db.run(f"CREATE TABLE {unique_name} (id int PRIMARY KEY, v text)")
    api.repl_create_snapshot_log(f"{unique_name}@{pg_db.conn_id}", catalog=catalog)
    pg_db.run(f"INSERT INTO {unique_name} VALUES (1, 'a'), (2, 'b')", f"UPDATE {unique_name} SET v = 'c' WHERE id = 1")
    log = catalog.log(f"public.{unique_name}@{pg_db.conn_id}")
    [(source_now,)] = pg_db.rows("SELECT (now() AT TIME ZONE 'UTC')::timestamp")
    applied = source_now - timedelta(hours=5)

    behind = log_backlog(log, applied)

    [(after,)] = pg_db.rows("SELECT (now() AT TIME ZONE 'UTC')::timestamp")
    assert behind.rows == 2, "one pending entry per changed key"
    assert (source_now - applied).total_seconds() <= behind.lag_seconds <= (after - applied).total_seconds()
    caught_up = log_backlog(log, after + timedelta(seconds=1))
    assert (caught_up.lag_seconds, caught_up.rows) == (0.0, 0), "nothing pending: lag 0"
    never = log_backlog(log, None)
    assert never.rows == 2 and 0 <= never.lag_seconds < 600, "never applied: lag from the oldest pending entry"

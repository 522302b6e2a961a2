"""Snapshot groups for the Airflow tests: on the deployment of tests/integration/airflow/test_airflow_uses.py
a source schema of two tables (``parent`` and ``child``, a foreign key between them) made a group
through the CLI, with an hourly schedule, and what its scenarios read of it; for the Replication page's
test a group written with the catalog's own methods (:func:`recorded_group`)."""

from __future__ import annotations

import sys
import time
import uuid
from dataclasses import dataclass

from snaprepl.catalog.records import GroupRecord, HistoryRecord, SnapshotRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import group_dag_id
from tests.support.airflow_uses import DST, HOURLY, SRC, Deployment

TABLES = ("parent", "child")


@dataclass
class Group:
    deployment: Deployment
    schema: str
    prefix: str
    name: str
    dag_id: str

    def table(self, name: str) -> str:
        return f"{self.prefix}_{name}"

    def member(self, name: str) -> str:
        return f"main.{self.table(name)}@{DST}"

    @property
    def members(self) -> list[str]:
        return [self.member(t) for t in TABLES]

    def source(self, name: str) -> str:
        src = self.deployment.source
        return f"{src.q(self.schema)}.{src.q(self.table(name))}"

    def source_rows(self, name: str) -> list[tuple]:
        return self.deployment.source.rows(f"SELECT * FROM {self.source(name)} ORDER BY 1, 2")

    def dest_rows(self, name: str) -> list[tuple]:
        dest = self.deployment.dest
        return dest.rows(f"SELECT * FROM {dest.q(self.table(name))} ORDER BY 1, 2")

    def in_step(self) -> bool:
        return all(self.dest_rows(t) == self.source_rows(t) for t in TABLES)

    def runs_of(self, run_id: str) -> dict[str, list[HistoryRecord]]:
        """Each member's runs recorded by DAG run ``run_id``."""
        catalog = self.deployment.catalog
        return {m: [r for r in catalog.history(m, limit=None) if r.rh_dag_run_id == run_id] for m in self.members}

    def wait_for_scheduled_run(self, timeout: float = 120) -> str:
        """The run the scheduler makes for the latest hourly interval once the DAG is there (no catchup)."""
        cluster, deadline = self.deployment.cluster, time.monotonic() + timeout
        while time.monotonic() < deadline:
            runs = cluster.dag_runs(self.dag_id, "scheduled")
            if runs:
                return str(runs[0]["dag_run_id"])
            time.sleep(2)
        cluster.fail(f"the scheduler made no run of {self.dag_id} within {timeout} s", dag_id=self.dag_id)


def create_group(d: Deployment) -> Group:
    """The schema, its tables and rows, and ``CREATE SNAPSHOT GROUP ... SCHEDULE`` run by the CLI."""
    schema, prefix = f"gs_{uuid.uuid4().hex[:8]}", f"g{uuid.uuid4().hex[:8]}"
    group = Group(d, schema, prefix, f"{prefix}@{DST}", group_dag_id(f"{prefix}@{DST}"))
    d.source.run(
        f"CREATE SCHEMA {d.source.q(schema)}",
        f"CREATE TABLE {group.source('parent')} (id int PRIMARY KEY, v varchar(40))",
        f"CREATE TABLE {group.source('child')} (id int PRIMARY KEY, parent_id int NOT NULL "
        f"REFERENCES {group.source('parent')} (id), v varchar(40))",
        f"INSERT INTO {group.source('parent')} VALUES (1, 'one'), (2, 'two')",
        f"INSERT INTO {group.source('child')} VALUES (10, 1, 'a'), (20, 2, 'b')",
    )
    # Two logs and two first copies (a Spark job each): give a loaded machine time.
    statement = f"CREATE SNAPSHOT GROUP {group.name} FROM SCHEMA {schema}@{SRC} SCHEDULE '{HOURLY}'"
    done = d.cluster.run([sys.executable, "-m", "snaprepl", "sql", statement], timeout=900)
    assert done.returncode == 0, f"snaprepl sql failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return group


def recorded_group(catalog: Catalog, src: str, dst: str) -> tuple[str, list[str]]:
    """A snapshot group of two members (catalog records only: their queries are not real), at one point,
    whose members lagged 30 s and 20 min at the end of their last runs (the group's lag: 20 min)."""
    name = f"grp{uuid.uuid4().hex[:6]}@{dst}"
    catalog.add_group(GroupRecord(name, dst, "main", src, "sales", utcnow()), AssertionError("exists"))
    members = [f"main.{t}_{name.split('@', maxsplit=1)[0]}@{dst}" for t in ("orders", "lines")]
    for member, lag in zip(members, (30.0, 1200.0), strict=True):
        table = member[5:].split("@", maxsplit=1)[0]
        record = SnapshotRecord(member, "SELECT 1 AS x", src, dst, "main", table, utcnow(), sn_is_incremental=1)
        catalog.add_snapshot(record, AssertionError("exists"), name)
        ended = utcnow()
        catalog.record_run(HistoryRecord(member, "incremental", ended, ended, "ok", rh_lag_seconds=lag))
    catalog.record_group_point(name, {src: utcnow()})
    return name, members

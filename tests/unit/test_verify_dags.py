"""The optional verify DAG of a snapshot (no services)."""

from __future__ import annotations

from snaprepl.airflow.dag_factory import build_dags
from snaprepl.common.dag_names import snapshot_dag_id, verify_dag_id
from snaprepl.settings import Settings
from tests.support.dag_factory_fakes import FakeCatalog, snapshot


def test_a_verify_dag_only_for_a_snapshot_with_a_verify_schedule() -> None:
    plain = snapshot("public.a@dst", schedule="@hourly")
    checked = snapshot("public.b@dst", sn_verify_schedule="@weekly")
    dags = build_dags(catalog=FakeCatalog(snapshots=[plain, checked]), settings=Settings())
    assert verify_dag_id(plain.sn_name) not in dags, "off by default"
    assert snapshot_dag_id(checked.sn_name) in dags
    dag = dags[verify_dag_id(checked.sn_name)]
    assert [t.task_id for t in dag.tasks] == ["verify"] and dag.tasks[0].snapshot == checked.sn_name
    assert dag.timetable.expression == "0 0 * * 0", "@weekly"

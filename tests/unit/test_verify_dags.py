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


def test_a_publication_verify_dag_has_one_task_per_replica_only_when_scheduled() -> None:
    import dataclasses

    from snaprepl.airflow.verify_operator import ReplicaVerifyOperator
    from snaprepl.common.dag_names import publication_verify_dag_id
    from tests.support.dag_factory_fakes import PUB, publication

    plain = publication()
    assert publication_verify_dag_id(PUB) not in build_dags(catalog=plain, settings=Settings()), "off by default"
    checked = publication()
    checked._publications = [dataclasses.replace(p, sp_verify_schedule="@weekly") for p in checked._publications]
    dag = build_dags(catalog=checked, settings=Settings())[publication_verify_dag_id(PUB)]
    assert sorted(t.task_id for t in dag.tasks) == ["verify__s_a", "verify__s_b", "verify__s_c"]
    assert all(isinstance(t, ReplicaVerifyOperator) and t.item == PUB and not t.upstream_task_ids for t in dag.tasks)
    assert dag.timetable.expression == "0 0 * * 0", "@weekly"

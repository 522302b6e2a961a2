"""A publication of a WebDAV collection in the scheduler deployment: two wsgidav servers and a local
folder, created as the seed writes it, with its DAG's first scheduled run done."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from snaprepl.common.dag_names import publication_dag_id, task_key
from tests.support.airflow_cluster import AirflowCluster
from tests.support.scheduler_deployment import Deployment

COLL = "/shared/docs/"
DAV1, DAV2, FOLDER = "sched_dav1", "sched_dav2", "sched_folder"


@dataclass
class CollectionPublication:
    deployment: Deployment
    roots: dict[str, Path]
    item: str
    dag_id: str
    dag: dict


@pytest.fixture(scope="module")
def collection_publication(
    deployment: Deployment, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CollectionPublication]:
    """A WebDAV collection published (wsgidav on loopback), with a second WebDAV server and a local
    folder subscribed and loaded, as the seed writes it (through the CLI); the connections defined
    through the REST API, as a user does."""
    from tests.support.collections import put
    from tests.support.webdav import PASSWORD as DAV_PASSWORD
    from tests.support.webdav import USER, webdav_server

    d = deployment
    base = tmp_path_factory.mktemp("sched-collections")
    roots = {name: base / name for name in (DAV1, DAV2, FOLDER)}
    for root in roots.values():
        root.mkdir()
    with webdav_server(roots[DAV1]) as one, webdav_server(roots[DAV2]) as two:
        dav = {"conn_type": "webdav", "login": USER, "password": DAV_PASSWORD}
        for conn_id, body in {
            DAV1: {**dav, "host": one.url},
            DAV2: {**dav, "host": two.url},
            FOLDER: {"conn_type": "fs", "extra": json.dumps({"path": str(roots[FOLDER])})},
        }.items():
            d.cluster.api("POST", "/api/v2/connections", {"connection_id": conn_id, **body})
        put(roots[DAV1], COLL, "readme.txt", b"v1 readme")
        put(roots[DAV1], COLL, "a/b/deep.bin", bytes(range(256)) * 400)
        item = f"{COLL}@{DAV1}"
        # The schedule first: the DAG appears with the first load, and must have it when it does.
        statements = f"REPL_CREATE_SNAPSHOT_PUB ('{item}', 1); REPL_SET_PUBLICATION_SCHEDULE ('{item}', '0 3 * * *'); "
        statements += "".join(
            f"REPL_SNP_SERVER ('{sub}', 'dba', 'dba'); "
            f"REPL_CREATE_SNAPSHOT_SUB (REPL_SERVER_NAME ('{sub}'), '{item}', 1); "
            f"REPL_INIT_SNAPSHOT (REPL_SERVER_NAME ('{sub}'), '{item}', 1); "
            for sub in (DAV2, FOLDER)
        )
        created = d.cluster.run([sys.executable, "-m", "snaprepl", "sql", "-v", statements])
        assert created.returncode == 0, f"snaprepl sql failed:\n{created.stdout[-3000:]}\n{created.stderr[-3000:]}"
        assert f"init of {DAV2}: 2 copied" in created.stdout and f"init of {FOLDER}: 2 copied" in created.stdout
        assert DAV_PASSWORD not in created.stdout + created.stderr, "the CLI printed the WebDAV password"
        dag_id = publication_dag_id(item)
        dag = d.cluster.wait_for_dag(dag_id)
        # It appears with the first subscriber loaded: a run of that DAG would push to one subscriber
        # before pulling the other (new tasks join a running run: the dags folder is not versioned).
        steps = {f"{step}__{task_key(s)}" for step in ("pull", "push") for s in (DAV2, FOLDER)}
        d.cluster.wait_for_tasks(dag_id, steps)
        # Unpaused without catchup, the DAG runs its latest interval at once: let that run end first.
        scheduled = first_run(d.cluster, dag_id, "scheduled")
        d.cluster.wait_for_run(dag_id, scheduled, timeout=300)
        yield CollectionPublication(d, roots, item, dag_id, dag)


def first_run(cluster: AirflowCluster, dag_id: str, run_type: str, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while not (runs := cluster.dag_runs(dag_id, run_type)):
        if time.monotonic() > deadline:
            cluster.fail(f"no {run_type} run of {dag_id} within {timeout:.0f} s", dag_id=dag_id)
        time.sleep(2)
    return str(runs[0]["dag_run_id"])

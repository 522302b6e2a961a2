"""Fixtures of the collection tests: two real WebDAV servers (wsgidav on loopback) and a local folder,
reached through Airflow connections in the environment, and a SQLite catalog at the newest revision.
Servers start once per session and stop at its end. Syncs run the sync job's own ``run`` in this
process (``syncer``), as spark-submit would run it; test_collection_submit.py runs the real submission."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.support.webdav import PASSWORD, USER, plain_http, webdav_server


@dataclass(frozen=True)
class Sides:
    """Where each server keeps its files (the WebDAV servers' folders and the local folder)."""

    dav1: Path
    dav2: Path
    folder: Path

    def roots(self) -> dict[str, Path]:
        return {"dav1": self.dav1, "dav2": self.dav2, "folder": self.folder}


def _conn(name: str, value: dict[str, object]) -> None:
    os.environ[f"AIRFLOW_CONN_{name.upper()}"] = json.dumps(value)


@pytest.fixture(scope="session")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sides]:
    base = tmp_path_factory.mktemp("collections")
    found = Sides(base / "dav1", base / "dav2", base / "folder")
    for root in found.roots().values():
        root.mkdir()
    (base / "plain").mkdir()
    with webdav_server(found.dav1) as one, webdav_server(found.dav2) as two, plain_http(base / "plain") as plain:
        dav = {"conn_type": "webdav", "login": USER, "password": PASSWORD}
        _conn("dav1", {**dav, "host": one.url})
        _conn("dav2", {**dav, "host": two.url})
        _conn(
            "dav_badpw", {**dav, "host": one.url, "password": "wrong-" + PASSWORD, "extra": {"replication_name": "bad"}}
        )
        _conn("not_dav", {"conn_type": "http", "host": plain, "extra": {"replication_name": "plain"}})
        _conn("folder", {"conn_type": "fs", "extra": {"path": str(found.folder)}})
        yield found


@pytest.fixture(scope="session")
def coll_catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from snaprepl.catalog.migrate import upgrade
    from snaprepl.catalog.store import Catalog

    engine = sa.create_engine(f"sqlite:///{tmp_path_factory.mktemp('catalog') / 'catalog.db'}")
    upgrade(engine)
    catalog = Catalog(engine)
    yield catalog
    catalog.dispose()


@pytest.fixture(scope="session")
def syncer(request: pytest.FixtureRequest) -> object:
    """Runs the sync job (:mod:`snaprepl.collections.job`, as ``submit/sync.py`` picks it) in this
    process, its SparkSession the session's, started only if the job asks for it."""
    from tests.support.jobs import in_process_syncer

    return in_process_syncer(lambda: request.getfixturevalue("spark"))

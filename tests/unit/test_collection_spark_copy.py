"""Which resources of a collection sync go to Spark tasks (pure selection), and the catalog URL the
tasks connect with."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from snaprepl.catalog.manifests import ManifestEntry as E
from snaprepl.catalog.store import Catalog
from snaprepl.collections.spark_copy import _delta, catalog_url, plain_pulls, plain_pushes
from snaprepl.collections.sync import Counts


def test_pushes_in_tasks_are_those_with_something_to_write() -> None:
    pub = {
        "same": E("same", "p@1", "p@1"),
        "changed": E("changed", "p@2", "p@1"),
        "new": E("new", "p@3", None),
        "gone": E("gone", "p@4", "p@0", deleted=True),
        "gone_everywhere": E("gone_everywhere", "p@5", "p@0", deleted=True),
    }
    sub = {
        "same": E("same", "p@1", "p@1"),
        "changed": E("changed", "p@1", "p@1"),
        "gone": E("gone", "p@0", "p@0"),
        "gone_everywhere": E("gone_everywhere", "s@1", "p@0", deleted=True),
        "only_sub": E("only_sub", "s@2", None),
    }
    work = plain_pushes(sorted(set(pub) | set(sub)), pub, sub)
    assert [(w.path, w.publisher, w.subscriber) for w in work] == [
        ("changed", pub["changed"], sub["changed"]),
        ("gone", pub["gone"], sub["gone"]),
        ("new", pub["new"], None),
    ]
    assert work[0].row()[0] == "changed" and '"rowguid": "p@2"' in str(work[0].row()[1])


def test_pulls_in_tasks_are_changes_the_publisher_takes_as_they_are() -> None:
    sub = {
        "update": E("update", "s@1", "p@1"),  # publisher still at p@1: plain
        "create": E("create", "s@2", None),  # publisher has none: plain
        "over_deleted": E("over_deleted", "s@3", "p@2"),  # publisher deleted it: plain (recreated)
        "conflict": E("conflict", "s@4", "p@3"),  # publisher moved to p@4: judged in the driver
        "deletion": E("deletion", "s@5", "p@5", deleted=True),  # deletions: in the driver
        "agreed": E("agreed", "s@6", "p@6"),  # publisher already has s@6: in the driver (catalog only)
        "unchanged": E("unchanged", "p@7", "p@7"),  # not pending
    }
    pub = {
        "update": E("update", "p@1", "p@1"),
        "over_deleted": E("over_deleted", "p@9", "p@2", deleted=True),
        "conflict": E("conflict", "p@4", "p@3"),
        "deletion": E("deletion", "p@5", "p@5"),
        "agreed": E("agreed", "s@6", "p@6"),
        "unchanged": E("unchanged", "p@7", "p@7"),
    }
    assert [w.path for w in plain_pulls(sub, pub)] == ["create", "over_deleted", "update"]


def test_tasks_reach_the_catalog_by_an_absolute_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    relative = Catalog(sa.create_engine("sqlite:///catalog.db"))
    assert catalog_url(relative) == f"sqlite:///{tmp_path}/catalog.db"
    assert catalog_url(Catalog(sa.create_engine("sqlite://"))) is None  # in memory: the copies stay in the driver
    pg = Catalog(sa.create_engine("postgresql+psycopg2://u:secret@db:5432/cat"))
    assert catalog_url(pg) == "postgresql+psycopg2://u:secret@db:5432/cat"


def test_a_tasks_counts_come_back_as_what_each_step_added() -> None:
    counts = Counts(copied=2, locked=["a on dav2"])
    before = {"copied": 2, "deleted": 0, "conflicts": 0, "skipped": 0, "locked": ["a on dav2"]}
    counts.copied += 1
    counts.locked.append("b on dav1")
    assert _delta(before, vars(counts)) == {"copied": 1, "locked": ["b on dav1"]}

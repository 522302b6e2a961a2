"""A snapshot group's pass gives what a single snapshot's refresh gives (issue 25): its members follow
their sources' columns (added: added and filled; dropped: kept with their values, reported once;
widened: widened in place), a member reading another member's destination is applied after it (chains
through snaprepl's lineage), and nothing is lost when a source is truncated, a log's trigger was off, or
a transaction is open across the group's point.

Each test: a source schema of its own (``parent`` <- ``child`` by a foreign key) and a group over it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from snaprepl.api.script import run_script
from snaprepl.errors import CompleteRefreshRequired
from snaprepl.ops.group_refresh import update_group
from snaprepl.refresh.model import COMPLETE, INCREMENTAL
from snaprepl.statements.parser import parse_table_ref
from tests.support.databases import RealDatabase

pytestmark = pytest.mark.spark

PAIRS = [
    pytest.param(("postgres", "mysql_db"), id="pg-mariadb"),
    pytest.param(("mysql", "sqlite_db"), id="mariadb-sqlite"),
]


class Group:
    """A source schema with ``parent`` and ``child`` on ``src``, and a group of them into ``dest``."""

    def __init__(self, src: RealDatabase, dest: RealDatabase, kw: dict[str, Any]) -> None:
        self.src, self.dest, self.kw = src, dest, kw
        self.schema, self.p = f"g_{uuid.uuid4().hex[:8]}", f"t{uuid.uuid4().hex[:8]}"
        self.name = f"g{self.p}@{dest.conn_id}"

    def t(self, table: str) -> str:
        """A source table, qualified and quoted."""
        return f"{self.src.q(self.schema)}.{self.src.q(f'{self.p}_{table}')}"

    def d(self, table: str) -> str:
        """A destination table, quoted."""
        return self.dest.q(f"{self.p}_{table}")

    def member(self, table: str) -> str:
        return f"{self.dest.schema}.{self.p}_{table}@{self.dest.conn_id}"

    def create(self) -> None:
        t = self.t
        self.src.run(
            f"CREATE TABLE {t('parent')} (id int PRIMARY KEY, name varchar(10), w varchar(5))",
            f"CREATE TABLE {t('child')} (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES {t('parent')} (id), "
            "qty int, note varchar(10))",
            f"INSERT INTO {t('parent')} VALUES (1, 'p1', 'w1'), (2, 'p2', 'w2')",
            f"INSERT INTO {t('child')} VALUES (11, 1, 5, 'n11'), (12, 1, 6, 'n12'), (21, 2, 7, 'n21')",
        )
        self.run(f"CREATE SNAPSHOT GROUP {self.name} FROM SCHEMA {self.schema}@{self.src.conn_id}")

    def run(self, text: str) -> list[Any]:
        return run_script(text, **self.kw)

    def refresh(self, *, fallback: bool = False) -> dict[str, Any]:
        """UPDATE SNAPSHOT GROUP (as a DAG run with ``fallback_complete`` with ``fallback``): outcomes by table."""
        done = update_group(parse_table_ref(self.name), fallback_complete=fallback, **self.kw)
        return {o.snapshot.split("@")[0].split(".")[-1].removeprefix(f"{self.p}_"): o for o in done.outcomes}

    def source_rows(self, table: str, columns: str) -> list[tuple[Any, ...]]:
        return self.src.rows(f"SELECT {columns} FROM {self.t(table)} ORDER BY id")

    def copy_rows(self, table: str, columns: str) -> list[tuple[Any, ...]]:
        return self.dest.rows(f"SELECT {columns} FROM {self.d(table)} ORDER BY id")

    def same(self) -> bool:
        return all(
            self.source_rows(t, c) == self.copy_rows(t, c)
            for t, c in (("parent", "id, name"), ("child", "id, parent_id, note"))
        )


@pytest.fixture
def group(request: pytest.FixtureRequest, catalog: Any, settings: Any, refresher: Any) -> Iterator[Group]:
    source_dialect, dest_fixture = request.param
    src: RealDatabase = request.getfixturevalue({"postgres": "pg_db", "mysql": "mysql_db"}[source_dialect])
    made = Group(
        src, request.getfixturevalue(dest_fixture), {"catalog": catalog, "settings": settings, "refresher": refresher}
    )
    q = src.q(made.schema)
    src.run(f"CREATE SCHEMA {q}" if src.dialect == "postgres" else f"CREATE DATABASE {q}")
    made.create()
    yield made
    src.run(f"DROP SCHEMA {q} CASCADE" if src.dialect == "postgres" else f"DROP DATABASE {q}")


def _widen(g: Group, table: str, column: str, type_sql: str) -> str:
    if g.src.dialect == "postgres":
        return f"ALTER TABLE {g.t(table)} ALTER COLUMN {column} TYPE {type_sql}"
    return f"ALTER TABLE {g.t(table)} MODIFY {column} {type_sql}"


@pytest.mark.parametrize("group", PAIRS, indirect=True)
def test_group_members_follow_their_sources_columns(group: Group) -> None:
    g, t = group, group.t
    g.src.run(
        f"ALTER TABLE {t('parent')} ADD COLUMN extra varchar(10) DEFAULT 'dflt'",  # no trigger fires
        f"ALTER TABLE {t('child')} DROP COLUMN qty",
        _widen(g, "parent", "w", "varchar(40)"),
        f"UPDATE {t('parent')} SET w = 'longer than five' WHERE id = 2",
        f"INSERT INTO {t('parent')} (id, name, w) VALUES (3, 'p3', 'w3')",
        f"INSERT INTO {t('child')} (id, parent_id, note) VALUES (31, 3, 'n31')",
        f"DELETE FROM {t('child')} WHERE id = 12",
    )
    out = g.refresh()
    parent, child = out["parent"], out["child"]
    assert parent.kind == COMPLETE and "column extra added at the source" in (parent.note or ""), parent
    assert ("column w widened" in (parent.note or "")) == (g.dest.dialect != "sqlite"), parent.note
    assert child.kind == INCREMENTAL and "column qty dropped at the source: kept" in (child.note or ""), child
    assert g.copy_rows("parent", "id, name, w, extra") == g.source_rows("parent", "id, name, w, extra")
    assert g.copy_rows("parent", "extra") == [("dflt",)] * 3, "the added column is filled in every row"
    assert g.copy_rows("child", "id, qty, note") == [(11, 5, "n11"), (21, 7, "n21"), (31, None, "n31")], "qty kept"

    g.src.run(f"UPDATE {t('parent')} SET extra = 'x' WHERE id = 1", f"UPDATE {t('child')} SET note = 'm' WHERE id = 11")
    out = g.refresh()
    assert all(o.kind == INCREMENTAL and o.note is None for o in out.values()), "each change is reported once"
    assert g.copy_rows("parent", "id, extra") == [(1, "x"), (2, "dflt"), (3, "dflt")]
    assert g.copy_rows("child", "id, qty, note") == [(11, 5, "m"), (21, 7, "n21"), (31, None, "n31")]


@pytest.mark.parametrize("group", PAIRS[:1], indirect=True)
def test_a_member_reading_another_members_destination_is_applied_after_it(group: Group) -> None:
    """``chain`` copies the group's copy of ``parent`` (on the destination): one group refresh brings it
    to the source's state, as the lineage says it reads what ``parent``'s member writes."""
    g, dest = group, group.dest
    chain = f"{g.p}_chain@{dest.conn_id}"
    g.run(f"CREATE SNAPSHOT LOG FOR {g.p}_parent@{dest.conn_id}")
    g.run(f"CREATE SNAPSHOT {chain} FROM {g.p}_parent@{dest.conn_id}")
    g.run(f"ALTER SNAPSHOT GROUP {g.name} ADD {chain}")
    g.src.run(
        f"UPDATE {g.t('parent')} SET name = 'changed' WHERE id = 1",
        f"INSERT INTO {g.t('parent')} VALUES (3, 'p3', 'w3')",
    )
    out = g.refresh()
    assert set(out) == {"parent", "child", "chain"}
    assert g.copy_rows("chain", "id, name, w") == g.source_rows("parent", "id, name, w"), "the chain is at the point"
    assert list(out) == ["parent", "child", "chain"], "the chained member comes after the member it reads"


@pytest.mark.parametrize("group", PAIRS, indirect=True)
def test_a_transaction_open_across_the_groups_point_arrives_at_the_next_refresh(group: Group) -> None:
    g = group
    with g.src.connect() as conn:
        cur = conn.cursor()
        cur.execute("BEGIN")
        cur.execute(f"UPDATE {g.t('parent')} SET name = 'open' WHERE id = 1")
        cur.execute(f"INSERT INTO {g.t('child')} VALUES (13, 1, 8, 'open')")
        g.src.run(f"UPDATE {g.t('parent')} SET name = 'after' WHERE id = 2")  # committed while it is open
        g.refresh()
        assert g.copy_rows("parent", "id, name") == [(1, "p1"), (2, "after")], "not what is not committed"
        cur.execute("COMMIT")
    assert not g.same()
    g.refresh()
    assert g.same(), "the open transaction's changes arrived"


@pytest.mark.parametrize("group", PAIRS, indirect=True)
def test_a_truncated_member_source_fails_the_group_until_it_is_read_in_full(group: Group) -> None:
    g = group
    g.src.run(
        f"TRUNCATE TABLE {g.t('child')}",
        f"INSERT INTO {g.t('child')} VALUES (41, 2, 1, 'n41')",
        f"UPDATE {g.t('parent')} SET name = 'moved' WHERE id = 1",
    )
    before = g.copy_rows("parent", "id, name")
    for _ in range(2):  # said again until the member is read in full
        with pytest.raises(CompleteRefreshRequired, match=r"was truncated.*member of group") as failure:
            g.refresh()
        assert "\n" not in failure.value.message and "SNAPSHOT GROUP" in failure.value.hint
    assert g.copy_rows("parent", "id, name") == before, "nothing of the failed group refresh was applied"
    out = g.refresh(fallback=True)
    assert out["child"].kind == COMPLETE and out["parent"].kind == INCREMENTAL, out
    assert g.same()
    g.src.run(f"UPDATE {g.t('child')} SET note = 'again' WHERE id = 41", f"DELETE FROM {g.t('parent')} WHERE id = 1")
    out = g.refresh()
    assert all(o.kind == INCREMENTAL for o in out.values()) and g.same()


@pytest.mark.parametrize("group", PAIRS[:1], indirect=True)
def test_a_log_trigger_switched_off_fails_the_group_until_it_is_read_in_full(group: Group) -> None:
    g = group
    trigger = f"{g.schema}_{g.p}_child_D_log"
    g.src.run(
        f'ALTER TABLE {g.t("child")} DISABLE TRIGGER "{trigger}"',
        f"DELETE FROM {g.t('child')} WHERE id = 12",
        f'ALTER TABLE {g.t("child")} ENABLE ALWAYS TRIGGER "{trigger}"',
        f"UPDATE {g.t('parent')} SET name = 'x' WHERE id = 2",
    )
    with pytest.raises(CompleteRefreshRequired, match=rf"trigger {trigger} .*disabled"):
        g.refresh()
    out = g.refresh(fallback=True)
    assert out["child"].kind == COMPLETE and g.same()
    assert g.copy_rows("child", "id") == [(11,), (21,)], "the delete the trigger missed is applied"

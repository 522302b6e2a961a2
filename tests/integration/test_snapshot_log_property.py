"""Property: after any sequence of inserts, updates (including key changes) and deletes, RLOG_<t>
holds exactly one row per touched key, with the DMLTYPE of that key's latest change."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snaprepl import api
from tests.support.databases import RealDatabase

KEYS = st.integers(min_value=0, max_value=30)


@dataclass
class LogModel:
    """What the triggers must record: the latest change of each key (SEMANTICS section 3)."""

    present: set[int] = field(default_factory=set)
    log: dict[int, str] = field(default_factory=dict)

    def insert(self, key: int) -> bool:
        if key in self.present:
            return False
        self.present.add(key)
        self.log[key] = "I"
        return True

    def update(self, keys: list[int]) -> None:
        for key in keys:
            if key in self.present:
                self.log[key] = "U"

    def delete(self, keys: list[int]) -> None:
        for key in keys:
            if key in self.present:
                self.present.remove(key)
                self.log[key] = "D"

    def move(self, moves: dict[int, int]) -> bool:
        """Key changes old -> new in one statement; refused (not run) if a new key is taken."""
        moves = {old: new for old, new in moves.items() if old in self.present}
        if any(new in self.present for new in moves.values()):
            return False
        for old in moves:
            self.present.remove(old)
            self.log[old] = "D"
        for new in moves.values():
            self.present.add(new)
            self.log[new] = "I"
        return True


operations = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), KEYS),
        st.tuples(st.just("update"), KEYS),
        st.tuples(st.just("delete"), KEYS),
        st.tuples(st.just("move"), KEYS, KEYS),
        st.tuples(st.just("update_range"), KEYS, KEYS),
        st.tuples(st.just("delete_range"), KEYS, KEYS),
        st.tuples(st.just("shift_range"), KEYS, KEYS, st.integers(min_value=31, max_value=60)),
    ),
    min_size=1,
    max_size=25,
)


def _apply(db: RealDatabase, table: str, model: LogModel, op: tuple) -> None:
    t = db.q(table)
    kind = op[0]
    if kind == "insert":
        if model.insert(op[1]):
            db.run(f"INSERT INTO {t} (id, v) VALUES ({op[1]}, 0)")
    elif kind == "update":
        model.update([op[1]])
        db.run(f"UPDATE {t} SET v = v + 1 WHERE id = {op[1]}")
    elif kind == "delete":
        model.delete([op[1]])
        db.run(f"DELETE FROM {t} WHERE id = {op[1]}")
    elif kind == "move":
        old, new = op[1], op[2]
        if old == new:
            model.update([old])
            db.run(f"UPDATE {t} SET id = {new} WHERE id = {old}")
        elif model.move({old: new}):
            db.run(f"UPDATE {t} SET id = {new} WHERE id = {old}")
    else:
        low, high = sorted(op[1:3])
        in_range = sorted(k for k in model.present if low <= k <= high)
        where = f"WHERE id BETWEEN {low} AND {high}"
        if kind == "update_range":
            model.update(in_range)
            db.run(f"UPDATE {t} SET v = v + 1 {where}")
        elif kind == "delete_range":
            model.delete(in_range)
            db.run(f"DELETE FROM {t} {where}")
        elif model.move({k: k + op[3] for k in in_range}):
            # Shifted keys land above every current key, so no row collides while the statement runs.
            db.run(f"UPDATE {t} SET id = id + {op[3]} {where}")


@pytest.fixture
def logged_table(real_db: RealDatabase, catalog, unique_name: str) -> tuple[RealDatabase, str]:
    real_db.run(f"CREATE TABLE {real_db.q(unique_name)} (id {real_db.int_type()} PRIMARY KEY, v {real_db.int_type()})")
    api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    return real_db, unique_name


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_log_holds_the_latest_change_of_every_touched_key(logged_table: tuple[RealDatabase, str], ops: list) -> None:
    db, table = logged_table
    rlog = db.q(f"RLOG_{table}")
    db.run(f"DELETE FROM {db.q(table)}", f"DELETE FROM {rlog}")
    model = LogModel()
    for op in ops:
        _apply(db, table, model, op)
    rows = db.rows(f"SELECT * FROM {rlog}")
    assert {r[0]: r[2] for r in rows} == model.log
    assert len(rows) == len(model.log), "at most one row per key"
    assert len({r[3] for r in rows}) == len(rows), "every entry has its own RLOG_ROWGUID"
    assert sorted(r[0] for r in db.rows(f"SELECT id FROM {db.q(table)}")) == sorted(model.present)

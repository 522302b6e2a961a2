"""The cascade paths a MariaDB log follows, and what a cascade does along one (pure functions)."""

from __future__ import annotations

import pytest

from snaprepl.dialects.cascades import CascadePlan, CascadeTrigger, CascadeUnsupported
from snaprepl.dialects.mysql_cascades import DELETE, UPDATE, ForeignKey, cascade_paths_into, fingerprint, simulate


def _fk(
    name: str, child: str, parent: str, cols: str, refs: str, on_delete: str, on_update: str = "RESTRICT"
) -> ForeignKey:
    return ForeignKey(name, child, "db", parent, tuple(cols.split(",")), tuple(refs.split(",")), on_update, on_delete)


def _by_child(*fks: ForeignKey) -> dict[str, list[ForeignKey]]:
    out: dict[str, list[ForeignKey]] = {}
    for fk in fks:
        out.setdefault(fk.child, []).append(fk)
    return out


def test_paths_follow_cascading_children_up_a_diamond_and_skip_restrict() -> None:
    fks = _by_child(
        _fk("g_b", "g", "b", "bid", "id", "CASCADE"),
        _fk("g_c", "g", "c", "cid", "id", "SET NULL"),
        _fk("b_a", "b", "a", "aid", "id", "CASCADE"),
        _fk("c_a", "c", "a", "aid", "id", "CASCADE"),
        _fk("a_z", "a", "z", "zid", "id", "RESTRICT"),
    )
    paths = cascade_paths_into(fks, "db", "g")
    assert sorted(tuple(fk.name for fk in p) for p in paths) == [("g_b",), ("g_b", "b_a"), ("g_c",), ("g_c", "c_a")]
    assert fingerprint(paths)[0].startswith("b.b_a->a:CASCADE/RESTRICT <- g.g_b->b")


@pytest.mark.parametrize(
    ("fk", "reason"),
    [
        (_fk("t_t", "t", "t", "up", "id", "CASCADE"), "cycle"),
        (ForeignKey("t_o", "t", "other", "p", ("pid",), ("id",), "RESTRICT", "CASCADE"), "another database"),
        (_fk("t_d", "t", "p", "pid", "id", "SET DEFAULT"), "SET DEFAULT"),
    ],
)
def test_what_no_trigger_can_follow_is_named(fk: ForeignKey, reason: str) -> None:
    with pytest.raises(CascadeUnsupported, match=reason) as refused:
        cascade_paths_into(_by_child(fk), "db", "t")
    assert refused.value.constraint == fk.name


def test_a_restricting_cycle_is_no_cascade_cycle() -> None:
    assert cascade_paths_into(_by_child(_fk("t_t", "t", "t", "up", "id", "RESTRICT")), "db", "t") == []


def test_cascaded_key_changes_carry_the_new_value_down_the_path() -> None:
    top = _fk("c_p", "c", "p", "pid", "id", "CASCADE", "CASCADE")
    low = _fk("k_c", "k", "c", "pid,cn", "pid,n", "CASCADE", "CASCADE")
    quote = lambda name: f"`{name}`"  # noqa: E731
    effect = simulate((low, top), UPDATE, quote)
    assert effect is not None and not effect.deleted
    assert effect.columns == {"pid", "cn"} and dict(effect.new) == {"pid": "NEW.`id`"}
    assert simulate((low, top), DELETE, quote) == simulate((top,), DELETE, quote)
    set_null = _fk("n_p", "n", "p", "pid", "id", "SET NULL")
    assert simulate((set_null,), UPDATE, quote) is None, "ON UPDATE RESTRICT: nothing cascades"
    deleted = simulate((set_null,), DELETE, quote)
    assert deleted is not None and dict(deleted.new) == {"pid": "NULL"}


def test_the_recorded_plan_round_trips() -> None:
    plan = CascadePlan(triggers=(CascadeTrigger("db", "p", "c_from_p_D_cascade"),), paths=("x",))
    assert CascadePlan.from_json(plan.to_json()) == plan
    assert CascadePlan().to_json() is None and CascadePlan.from_json(None) == CascadePlan()

"""Snapshot groups' statements and the pure parts of a group: its dependency order and EXCLUDE patterns."""

from __future__ import annotations

import pytest

from snaprepl.errors import StatementSyntaxError
from snaprepl.ops.group_members import dependency_order, excluded, parse_patterns
from snaprepl.statements import ast
from snaprepl.statements.parser import parse_script


def test_create_snapshot_group_reads_every_clause() -> None:
    (statement,) = parse_script(
        "create snapshot group g@dst from schema sales@src into schema copy "
        "exclude 'audit_*, tmp_%' include new tables schedule '@hourly'"
    )
    assert isinstance(statement, ast.CreateSnapshotGroup)
    assert (statement.name.table.text, statement.name.conn_id) == ("g", "dst")
    assert (statement.source.table.text, statement.source.conn_id) == ("sales", "src")
    assert statement.into is not None and statement.into.text == "copy"
    assert (statement.exclude, statement.include_new) == ("audit_*, tmp_%", True)
    assert statement.schedule == ast.Schedule("@hourly")
    (bare,) = parse_script("CREATE SNAPSHOT GROUP g@dst FROM SCHEMA sales@src")
    assert (bare.into, bare.exclude, bare.include_new, bare.schedule) == (None, None, False, None)


def test_update_alter_and_drop_snapshot_group() -> None:
    update, plain, add, remove, drop = parse_script(
        "UPDATE SNAPSHOT GROUP g@d AS NONINCREMENTAL; UPDATE SNAPSHOT GROUP g@d; "
        "ALTER SNAPSHOT GROUP g@d ADD s.t@d; alter snapshot group g@d remove t@d; DROP SNAPSHOT GROUP g@d"
    )
    assert update == ast.UpdateSnapshotGroup(update.name, nonincremental=True) and not plain.nonincremental
    assert isinstance(add, ast.AlterSnapshotGroup) and add.add and add.member.schema is not None
    assert isinstance(remove, ast.AlterSnapshotGroup) and not remove.add
    assert isinstance(drop, ast.DropSnapshotGroup)
    scheduled, manual = parse_script(
        "ALTER SNAPSHOT GROUP g@d SCHEDULE '@daily'; ALTER SNAPSHOT GROUP g@d SCHEDULE NONE"
    )
    assert scheduled.member is None and scheduled.schedule == ast.Schedule("@daily")
    assert manual.member is None and manual.schedule == ast.Schedule(None)


def test_group_is_a_keyword_only_where_a_group_can_start() -> None:
    (statement,) = parse_script("CREATE SNAPSHOT groups FROM orders@src")
    assert isinstance(statement, ast.CreateIncrementalSnapshot) and statement.dest.table.text == "groups"
    with pytest.raises(StatementSyntaxError):
        parse_script("ALTER SNAPSHOT GROUP g@d RENAME x@d")


def test_parents_come_before_their_children_and_cycles_do_not_hang() -> None:
    edges = [("lines", "orders"), ("orders", "customers"), ("lines", "products"), ("self", "self")]
    order = dependency_order(["lines", "orders", "customers", "products", "self", "zeta"], edges)
    assert order.index("customers") < order.index("orders") < order.index("lines")
    assert order.index("products") < order.index("lines")
    cyclic = dependency_order(["a", "b", "c"], [("a", "b"), ("b", "a"), ("c", "a")])
    assert sorted(cyclic) == ["a", "b", "c"] and cyclic.index("a") < cyclic.index("c")


def test_exclude_patterns_match_in_any_case_and_take_sql_percent() -> None:
    patterns = parse_patterns("audit_*, TMP_%, , exact")
    assert patterns == ["audit_*", "TMP_*", "exact"]
    assert excluded("AUDIT_2024", patterns) and excluded("tmp_x", patterns) and excluded("Exact", patterns)
    assert not excluded("orders", patterns) and not excluded("exactly", patterns)

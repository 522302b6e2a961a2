"""Clauses added for safety: USING EXISTING TABLE / ON PREBUILT TABLE."""

from __future__ import annotations

import pytest

from snaprepl.errors import StatementSyntaxError
from snaprepl.statements import ast
from snaprepl.statements.parser import parse_script


@pytest.mark.parametrize("clause", ["USING EXISTING TABLE", "using  existing\ntable", "ON PREBUILT TABLE"])
def test_the_existing_table_clause_is_an_explicit_opt_in(clause: str) -> None:
    (inc,) = parse_script(f"CREATE SNAPSHOT d@x FROM s@y 'a' WHERE 'b = 1' {clause} SCHEDULE '@hourly'")
    assert isinstance(inc, ast.CreateIncrementalSnapshot) and inc.use_existing
    assert inc.schedule == ast.Schedule("@hourly")
    (noninc,) = parse_script(f"CREATE NONINCREMENTAL SNAPSHOT d AS 'SELECT 1' {clause}")
    assert isinstance(noninc, ast.CreateNonincrementalSnapshot) and noninc.use_existing


def test_without_the_clause_an_existing_table_is_not_used() -> None:
    (inc,) = parse_script("CREATE SNAPSHOT d FROM s")
    assert inc.use_existing is False
    (noninc,) = parse_script("CREATE NONINCREMENTAL SNAPSHOT d AS 'SELECT 1' SCHEDULE NONE")
    assert noninc.use_existing is False


def test_the_clause_comes_before_the_schedule() -> None:
    with pytest.raises(StatementSyntaxError):
        parse_script("CREATE SNAPSHOT d FROM s SCHEDULE '@hourly' USING EXISTING TABLE")

"""Arguments of the Python API and of the function forms are checked before anything runs.

No catalog or database is given to these calls: a check that let an argument through would reach
``Catalog.open`` and fail with another error than the one asserted.
"""

from __future__ import annotations

from typing import Any

import pytest

from snaprepl import api
from snaprepl.api.script import Context, execute
from snaprepl.common.arguments import parse_flag
from snaprepl.errors import InvalidArgument
from snaprepl.statements.parser import parse_script


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, False), (1, True), ("0", False), ("1", True), (True, True), (False, False), ("TRUE", True), ("False", False)],
)
def test_flags_accept_only_zero_one_true_false(value: object, expected: bool) -> None:
    assert parse_flag(value, "force") is expected


@pytest.mark.parametrize("value", ["no", "yes", 0.5, "", 2, -1, None, " 1", "t", b"1", [1], 1.0])
def test_every_other_flag_value_is_refused(value: object) -> None:
    with pytest.raises(InvalidArgument, match=r"^force must be 0, 1, true or false, got "):
        parse_flag(value, "force")


@pytest.mark.parametrize("value", ["no", 0.5, "", 2, None])
def test_api_flags_are_refused_before_anything_runs(value: object) -> None:
    with pytest.raises(InvalidArgument, match="argument delete must be 0, 1, true or false"):
        api.repl_drop_snapshot("d@conn", value)
    with pytest.raises(InvalidArgument, match="argument force must be 0, 1, true or false"):
        api.repl_purge_snapshot_log("orders@src", value)


def _run(text: str) -> Any:
    # No catalog: the call must be refused before it would be used.
    (statement,) = parse_script(text)
    return execute(statement, Context(catalog=None, settings=None))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "SELECT repl_drop_snapshot('d@conn', 'no')",
        "SELECT repl_drop_snapshot('d@conn', 0.5)",
        "SELECT repl_drop_snapshot('d@conn', 2)",
        "SELECT repl_drop_snapshot('d@conn', '')",
        "SELECT repl_drop_snapshot('d@conn', NULL)",
        "repl_purge_snapshot_log('orders@src', 'no')",
        "repl_purge_snapshot_log('orders@src', 0.5)",
        "repl_purge_snapshot_log('orders@src', 'yes')",
    ],
)
def test_function_forms_refuse_ambiguous_flags(text: str) -> None:
    with pytest.raises(InvalidArgument, match="must be 0, 1, true or false"):
        _run(text)


def test_true_and_false_are_literals_of_the_function_forms() -> None:
    (call,) = parse_script("repl_drop_snapshot('d@c', TRUE)")
    assert call.args == ("d@c", True)
    (call,) = parse_script("repl_purge_snapshot_log('d@c', false)")
    assert call.args == ("d@c", False)

"""The verify statements, job arguments and JSON shape (no services)."""

from __future__ import annotations

from snaprepl.spark.job_args import job_argv, parse_job_argv
from snaprepl.statements import ast
from snaprepl.statements.parser import parse_script
from snaprepl.verify.model import VerifyOutcome, VerifyRequest


def test_verify_and_repair_statements_parse() -> None:
    verify, repair = parse_script("VERIFY SNAPSHOT s.d@dst; repair snapshot d@dst WHERE 'id > 5'")
    assert isinstance(verify, ast.VerifySnapshot) and not verify.repair and verify.condition is None
    assert str(verify.name.table) == "d" and verify.name.conn_id == "dst"
    assert isinstance(repair, ast.VerifySnapshot) and repair.repair and repair.condition == "id > 5"


def test_job_arguments_round_trip() -> None:
    request = VerifyRequest(snapshot="s.d@dst", repair=True, where="a = 'x y'", commit_rows=7, run_id="r1")
    argv = job_argv(request, "cat")
    assert parse_job_argv(VerifyRequest, argv, prog="verify", description="") == (request, "cat")
    plain = VerifyRequest(snapshot="d@dst")
    assert "--repair" not in job_argv(plain, "cat") and "--where" not in job_argv(plain, "cat")
    assert parse_job_argv(VerifyRequest, job_argv(plain, "cat"), prog="verify", description="")[0] == plain


def test_json_has_exactly_the_documented_keys_and_exit_codes() -> None:
    outcome = VerifyOutcome(
        copy="d@dst", equal=False, missing=1, extra=2, different=3, rows=10, seconds=1.23456,
        sample=[{"key": 1, "kind": "missing"}], excluded=4,
    )  # fmt: skip
    assert outcome.to_json() == {
        "copy": "d@dst", "equal": False, "missing": 1, "extra": 2, "different": 3,
        "sample": [{"key": 1, "kind": "missing"}], "rows": 10, "seconds": 1.235,
    }  # fmt: skip
    assert outcome.exit_code == 3 and VerifyOutcome(copy="d", equal=True).exit_code == 0
    assert VerifyOutcome.from_dict(outcome.to_dict()) == outcome
    assert "1 missing, 2 extra, 3 different" in str(outcome) and "4 keys with changes still in flight" in str(outcome)

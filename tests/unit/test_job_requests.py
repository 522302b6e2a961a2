"""One request object per Spark job: its command line is derived from its fields and read back into
an equal request, its numbers default to Settings' defaults, and no credential can travel in it."""

from __future__ import annotations

import dataclasses

import pytest

from snaprepl.publications.request import SyncRequest
from snaprepl.refresh.model import COMPLETE, RefreshRequest
from snaprepl.settings import Settings
from snaprepl.spark.job_args import Request, job_argv, parse_job_argv
from snaprepl.verify.model import VerifyRequest

REQUESTS = (RefreshRequest, SyncRequest, VerifyRequest)


def _round_trip(request: Request) -> tuple[Request, str]:
    return parse_job_argv(type(request), job_argv(request, "cat_conn"), prog="job", description="")


def test_every_request_survives_its_command_line() -> None:
    settings = Settings(
        snp_repl_tolerance_offset=3, refresh_commit_rows=7, refresh_max_partitions=2, reinit_detached=True
    )
    requests = [
        RefreshRequest.configured("t@d", settings, mode=COMPLETE, fallback_complete=True),
        RefreshRequest(snapshot="t@d"),
        SyncRequest.configured("init", "t@p", settings, server="s", rows_per_commit=5, atomic=True),
        SyncRequest(item="t@p", action="sync"),
        VerifyRequest.configured("t@d", settings, repair=True, where="a = 'x y' and b > 1"),
        VerifyRequest(snapshot="t@d"),
    ]
    for request in requests:
        assert _round_trip(request) == (request, "cat_conn"), request


def test_the_command_line_names_each_field_once_and_leaves_out_false_and_none() -> None:
    argv = job_argv(SyncRequest(item="t@p", action="pull", server="s", run_id="r1"), "cat_conn")
    assert argv[:6] == ["--item", "t@p", "--action", "pull", "--server", "s"]
    assert "--atomic" not in argv and "--reinit-detached" not in argv
    assert argv[-4:] == ["--run-id", "r1", "--catalog-conn", "cat_conn"]
    assert job_argv(SyncRequest(item="t@p", action="sync"), "c").count("--server") == 0


def test_an_option_left_out_keeps_its_default_and_a_run_id_is_made() -> None:
    request, conn = parse_job_argv(
        RefreshRequest, ["--snapshot", "t@d", "--catalog-conn", "c"], prog="r", description=""
    )
    assert conn == "c" and request.run_id and request == RefreshRequest(snapshot="t@d", run_id=request.run_id)
    with pytest.raises(SystemExit):  # a request's field without a default is required
        parse_job_argv(RefreshRequest, ["--catalog-conn", "c"], prog="r", description="")


def test_the_numbers_default_to_the_settings_defaults() -> None:
    defaults = Settings()
    for request in (
        RefreshRequest(snapshot="t@d"),
        VerifyRequest(snapshot="t@d"),
        SyncRequest(item="t@p", action="sync"),
    ):
        assert request.tolerance_minutes == defaults.snp_repl_tolerance_offset
        assert request.commit_rows == defaults.refresh_commit_rows
        assert request.max_partitions == defaults.refresh_max_partitions
    assert SyncRequest(item="t@p", action="sync").reinit_detached is defaults.reinit_detached


def test_no_request_has_room_for_a_credential() -> None:
    for request_type in REQUESTS:
        names = {item.name for item in dataclasses.fields(request_type)}
        assert not {n for n in names if any(word in n for word in ("password", "secret", "token", "uri", "login"))}


def test_a_bad_action_or_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="sync action"):
        SyncRequest(item="t@p", action="merge")
    with pytest.raises(ValueError, match="refresh mode"):
        RefreshRequest(snapshot="t@d", mode="fast")

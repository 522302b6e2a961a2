"""The page's trigger when Airflow's REST API does not answer: a clear 504 that says the run may exist,
never a bare 500 (a loopback socket that accepts and stays silent, one that refuses)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from fastapi import HTTPException

from snaprepl.airflow.ui import trigger


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


def test_an_api_server_that_does_not_answer_gives_a_504_that_names_the_dag(
    silent_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trigger, "ANSWER_WITHIN", 0.5)
    with pytest.raises(HTTPException) as raised:
        trigger.trigger_dag(f"http://127.0.0.1:{silent_port}", "token", "snaprepl_snapshot_x", "incremental")
    assert raised.value.status_code == 504
    assert "snaprepl_snapshot_x" in raised.value.detail and "may have been created" in raised.value.detail


def test_an_api_server_that_refuses_the_connection_gives_a_504() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(HTTPException) as raised:
        trigger.trigger_dag(f"http://127.0.0.1:{port}", "token", "snaprepl_snapshot_x", None)
    assert raised.value.status_code == 504 and "did not answer" in raised.value.detail


def test_a_mode_that_is_not_one_gives_a_422_before_any_request() -> None:
    with pytest.raises(HTTPException) as raised:
        trigger.trigger_dag("http://127.0.0.1:9", "token", "snaprepl_snapshot_x", "everything")
    assert raised.value.status_code == 422

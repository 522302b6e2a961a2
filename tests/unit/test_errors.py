"""Error classes: each is found by name across the process boundary (a job reports its error's class
name, the submitter raises it again), and its class decides whether an Airflow task retries it."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest
from airflow.sdk.exceptions import AirflowFailException

import snaprepl
from snaprepl import errors
from snaprepl.airflow.operators import ReplicationSyncOperator, SnapshotRefreshOperator, failing_fast
from snaprepl.submit.submission import error_from_result

#: Modules that need what the unit tests lack (a Spark session, an Alembic environment).
_SKIP = {"snaprepl.catalog.migrations.env"}


def _all_error_classes() -> set[type[errors.SnapreplError]]:
    for info in pkgutil.walk_packages(snaprepl.__path__, "snaprepl."):
        if info.name not in _SKIP and ".migrations." not in info.name and not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    found: set[type[errors.SnapreplError]] = set()
    todo = [errors.SnapreplError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("snaprepl."):
                found.add(sub)
            todo.append(sub)
    return found


def test_every_error_class_is_found_by_its_name() -> None:
    classes = _all_error_classes()
    assert len(classes) > 20
    lost = sorted(c.__name__ for c in classes if errors.error_class(c.__name__, errors.RefreshFailed) is not c)
    assert lost == [], "error classes the submitter cannot raise again: define them in snaprepl.errors"


def test_transient_failures_are_retryable_and_mistakes_are_not() -> None:
    retryable = {c.__name__ for c in _all_error_classes() if c.retryable}
    assert {"LockTimeout", "LeaseLost", "DatabaseUnreachable", "SnapshotBusy", "ConnectServerDown"} <= retryable
    assert not {"NoPrimaryKey", "TableNotFound", "InvalidArgument", "StatementSyntaxError"} & retryable


class _Task:
    """An operator's ``execute`` reduced to what follows the job: its reported error raised again."""

    def __init__(self, result: dict[str, Any] | None) -> None:
        self.result = result

    @failing_fast
    def execute(self, context: Any) -> None:
        raise error_from_result(self.result, None if self.result else RuntimeError("spark-submit died"))


def _reported(kind: str, **extra: Any) -> dict[str, Any]:
    return {"ok": False, "error": {"type": kind, "message": "it went wrong", "hint": "do this", **extra}}


def test_no_primary_key_fails_the_task_without_a_retry() -> None:
    # Airflow's task runner fails a task that raises AirflowFailException at once, retries left or not.
    with pytest.raises(AirflowFailException, match=r"^NoPrimaryKey: it went wrong; do this$"):
        _Task(_reported("NoPrimaryKey")).execute({})


def test_lock_timeout_is_raised_as_itself_so_airflow_retries_it() -> None:
    with pytest.raises(errors.LockTimeout) as raised:
        _Task(_reported("LockTimeout")).execute({})
    assert not isinstance(raised.value, AirflowFailException)  # every other exception is retried


def test_a_jobs_unexpected_failure_and_a_job_without_result_are_retried() -> None:
    with pytest.raises(errors.RefreshFailed):  # reported by the job as its failure class, retryable
        _Task(_reported("RefreshFailed", retryable=True)).execute({})
    with pytest.raises(errors.RefreshFailed, match="ended without a result"):
        _Task(None).execute({})
    with pytest.raises(AirflowFailException, match=r"^RefreshFailed"):  # the job's own, deliberate error
        _Task(_reported("RefreshFailed")).execute({})


def test_both_operators_fail_fast() -> None:
    for operator in (SnapshotRefreshOperator, ReplicationSyncOperator):
        assert getattr(operator.execute, "__wrapped__", None) is not None, operator

"""in_background: the function runs in a thread of its own with the caller's context variables, and
its result or its error comes back through the future."""

from __future__ import annotations

import contextvars
import threading

import pytest

from snaprepl.common.background import in_background

SETTING: contextvars.ContextVar[str] = contextvars.ContextVar("setting", default="unset")


def _seen(suffix: str) -> tuple[str, str]:
    return SETTING.get() + suffix, threading.current_thread().name


def _fails() -> None:
    raise KeyError("the read failed")


def test_the_result_comes_back_from_another_thread_with_the_callers_context() -> None:
    SETTING.set("the run's")
    value, thread = in_background(_seen, " timeouts", name="snaprepl-test").result(timeout=10)
    assert value == "the run's timeouts"
    assert thread == "snaprepl-test" != threading.current_thread().name


def test_what_the_function_raised_is_raised_by_result() -> None:
    with pytest.raises(KeyError, match="the read failed"):
        in_background(_fails, name="snaprepl-test").result(timeout=10)

"""A function run by a thread of its own beside the caller, its result or error handed back."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


def in_background(function: Callable[..., T], *args: Any, name: str) -> Future[T]:
    """``function(*args)`` run by a daemon thread ``name`` in the caller's context (its context
    variables: a run's timeouts and connections); its result, or what it raised, in the future."""
    future: Future[T] = Future()
    context = contextvars.copy_context()

    def run() -> None:
        future.set_running_or_notify_cancel()
        try:
            future.set_result(context.run(function, *args))
        except BaseException as err:  # handed to whoever asks for the result
            future.set_exception(err)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future

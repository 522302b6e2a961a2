"""Turning failures inside Spark into one readable line."""

from __future__ import annotations

from typing import Any


def root_cause(err: BaseException) -> str:
    """``Type: message`` of the deepest cause; for Java exceptions behind py4j, the Java root cause
    (a database's own message, not "An error occurred while calling o105.save")."""
    java: Any = getattr(err, "java_exception", None)
    if java is not None:
        try:
            cause = java
            while cause.getCause() is not None and cause.getCause() != cause:
                cause = cause.getCause()
            name = cause.getClass().getSimpleName()
            message = (str(cause.getMessage() or "").strip().splitlines() or [""])[0]
            return f"{name}: {message}"
        except Exception:  # the JVM may be gone already
            pass
    while err.__cause__ is not None:
        err = err.__cause__
    text = (str(err).strip().splitlines() or [""])[0]
    return f"{type(err).__name__}: {text}"

"""Turning failures inside Spark into one readable line."""

from __future__ import annotations

from typing import Any

from snaprepl.errors import RefreshFailed


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


def foreign_key_failure(what: str, err: BaseException) -> RefreshFailed:
    """A refresh that would break a foreign key of the destination (deleting a row another table still
    references, or inserting one that references a missing row): one line naming the constraint."""
    return RefreshFailed(
        f"{what} would break a foreign key: {root_cause(err)}",
        "rows the source no longer has are still referenced by another table (or new rows reference rows "
        "that do not exist): fix those rows, or declare the foreign key ON DELETE CASCADE or SET NULL, then "
        "refresh again; the destination keeps its last consistent content",
    )

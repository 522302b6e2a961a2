"""Lock and statement timeouts of the sessions snaprepl opens on sources and destinations.

Without them a refresh whose destination another session has locked waited forever on PostgreSQL
(its status saying ``running``) and failed after MariaDB's 50 s without a retry. Every session now
gets the ``[snaprepl] lock_timeout_seconds`` and ``statement_timeout_seconds`` settings in the
dialect's own terms (``Dialect.session_setup_sql`` for Python drivers, ``Dialect.jdbc_timeouts`` for
Spark's JDBC connections); a statement that gives up waiting for a lock raises :class:`LockTimeout`,
which names the table it waited for and which Airflow retries.

Spark jobs read no Airflow configuration: the submitter hands the two values over as environment
variables (:func:`job_env`).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from snaprepl.errors import LockTimeout
from snaprepl.settings import Settings


class LockTimeoutTeller(Protocol):
    """What :func:`lock_timeout` needs of a dialect (this module sits below the dialects)."""

    def is_lock_timeout(self, err: BaseException) -> bool: ...


LOCK_ENV = "AIRFLOW__SNAPREPL__LOCK_TIMEOUT_SECONDS"
STATEMENT_ENV = "AIRFLOW__SNAPREPL__STATEMENT_TIMEOUT_SECONDS"


@dataclass(frozen=True)
class Timeouts:
    lock_seconds: int = 60
    statement_seconds: int = 0


#: A lower lock timeout for the sessions opened inside :func:`capped` (None: no cap).
_LOCK_CAP: ContextVar[int | None] = ContextVar("snaprepl_lock_cap", default=None)


def current() -> Timeouts:
    """The timeouts in force: the environment's (set for Spark jobs), else the settings', with the lock
    timeout lowered to the cap of an enclosing :func:`capped` block."""
    lock, statement = os.environ.get(LOCK_ENV), os.environ.get(STATEMENT_ENV)
    if lock and statement and lock.isdigit() and statement.isdigit():
        limits = Timeouts(max(int(lock), 1), int(statement))
    else:
        settings = _settings()
        limits = Timeouts(settings.lock_timeout_seconds, settings.statement_timeout_seconds)
    cap = _LOCK_CAP.get()
    return limits if cap is None else Timeouts(min(limits.lock_seconds, cap), limits.statement_seconds)


@contextmanager
def capped(lock_seconds: int) -> Iterator[None]:
    """Sessions opened in this block wait at most ``lock_seconds`` for a lock: for work that may give
    up and leave the decision to a later step (the submitter's idle check leaves it to the job)."""
    token = _LOCK_CAP.set(max(lock_seconds, 1))
    try:
        yield
    finally:
        _LOCK_CAP.reset(token)


@functools.cache
def _settings() -> Settings:
    """Loaded once per process: the database sessions asking for timeouts hold no settings."""
    return Settings.load()


def job_env(settings: Settings) -> dict[str, str]:
    """Environment variables that carry the timeouts into a Spark job."""
    return {LOCK_ENV: str(settings.lock_timeout_seconds), STATEMENT_ENV: str(settings.statement_timeout_seconds)}


def lock_timeout(
    dialect: LockTimeoutTeller, err: Any, statement: str | None, where: str, seconds: int
) -> LockTimeout | None:
    """The :class:`LockTimeout` for a driver error that is the dialect's lock timeout, else None.

    :param where: the database, for the message (e.g. "connection 'x' (postgres at ...)").
    """
    if err is None or not dialect.is_lock_timeout(err):
        return None
    table = _first_table(statement)
    waited = f"waiting for a lock on {table}" if table else "waiting for a lock"
    return LockTimeout(
        f"gave up after {seconds} s {waited} on {where}: another session holds it",
        "a retry later may succeed (Airflow retries the task); find the session holding the lock, or raise "
        "[snaprepl] lock_timeout_seconds",
    )


_NAME = r"(?:`[^`]+`|\"[^\"]+\"|\[[^\]]+\]|[\w$]+)"
_TABLE = re.compile(rf"\b(?:TABLE|INTO|FROM|UPDATE|JOIN)\s+(?:IF\s+EXISTS\s+)?({_NAME}(?:\.{_NAME})?)", re.IGNORECASE)


#: ``CREATE TABLE staging LIKE dest`` (a swap's staging table) waits for ``dest``'s lock, not the new table's.
_LIKE = re.compile(rf"^\s*CREATE\s+TABLE\s+\S+\s+LIKE\s+({_NAME}(?:\.{_NAME})?)", re.IGNORECASE)


def _first_table(statement: str | None) -> str | None:
    """The table a (snaprepl-generated) statement waits for first, unquoted, for messages: the one a
    ``CREATE TABLE … LIKE`` copies, else the first it names."""
    match = _LIKE.search(statement or "") or _TABLE.search(statement or "")
    return re.sub(r'[`"\[\]]', "", match.group(1)) if match else None

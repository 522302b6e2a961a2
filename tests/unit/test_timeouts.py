"""Lock and statement timeouts in each dialect's terms, and lock timeouts told from other errors."""

from __future__ import annotations

import sqlite3

import pytest

from snaprepl.common import timeouts
from snaprepl.dialects import get_dialect
from snaprepl.errors import InvalidArgument, LockTimeout
from snaprepl.settings import Settings


class PgError(Exception):
    def __init__(self, pgcode: str) -> None:
        super().__init__("canceling statement due to lock timeout")
        self.pgcode = pgcode


def test_settings_default_to_a_minute_of_lock_wait_and_no_statement_limit() -> None:
    assert (Settings().lock_timeout_seconds, Settings().statement_timeout_seconds) == (60, 0)
    with pytest.raises(InvalidArgument, match="lock_timeout_seconds"):
        Settings(lock_timeout_seconds=0)
    assert timeouts.job_env(Settings(lock_timeout_seconds=5)) == {
        timeouts.LOCK_ENV: "5",
        timeouts.STATEMENT_ENV: "0",
    }


def test_each_dialect_sets_its_own_timeouts() -> None:
    pg, my, lite = get_dialect("postgres"), get_dialect("mysql"), get_dialect("sqlite")
    assert pg.session_setup_sql(5, 0) == ["SET lock_timeout = '5s'", "SET statement_timeout = '0s'"]
    assert my.session_setup_sql(5, 30) == [
        "SET SESSION innodb_lock_wait_timeout = 5, lock_wait_timeout = 5, max_statement_time = 30"
    ]
    assert lite.session_setup_sql(5, 30) == ["PRAGMA busy_timeout = 5000"]
    assert pg.jdbc_timeouts({"options": "-c default_transaction_read_only=on"}, 5, 0)["options"] == (
        "-c default_transaction_read_only=on -c lock_timeout=5s -c statement_timeout=0s"
    )
    assert my.jdbc_timeouts({}, 5, 0) == {"sessionVariables": "innodb_lock_wait_timeout=5,lock_wait_timeout=5"}
    assert lite.jdbc_timeouts({}, 5, 0) == {"busy_timeout": "5000"}


def test_only_lock_timeouts_become_lock_timeout_errors() -> None:
    pg, my, lite = get_dialect("postgres"), get_dialect("mysql"), get_dialect("sqlite")
    error = timeouts.lock_timeout(pg, PgError("55P03"), 'DELETE FROM "public"."orders" WHERE 1 = 1', "db", 5)
    assert isinstance(error, LockTimeout)
    assert str(error).startswith("gave up after 5 s waiting for a lock on public.orders on db")
    assert timeouts.lock_timeout(pg, PgError("57014"), "DELETE FROM t", "db", 5) is None, "statement timeout"
    assert timeouts.lock_timeout(my, Exception(1205, "Lock wait timeout exceeded"), "RENAME TABLE `a` TO `b`", "d", 5)
    assert timeouts.lock_timeout(my, Exception(1062, "Duplicate entry"), "INSERT INTO t", "d", 5) is None
    like = timeouts.lock_timeout(my, Exception(1205, "Lock"), "CREATE TABLE `d`.`stage` LIKE `d`.`copy`", "d", 5)
    assert "waiting for a lock on d.copy on d" in str(like), "a swap's staging table waits for its destination"
    busy = sqlite3.OperationalError("database is locked")
    assert "waiting for a lock on f.db" in str(timeouts.lock_timeout(lite, busy, "BEGIN IMMEDIATE", "f.db", 5))


def test_a_capped_block_lowers_the_lock_timeout_only_inside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(timeouts.LOCK_ENV, "60")
    monkeypatch.setenv(timeouts.STATEMENT_ENV, "7")
    assert timeouts.current() == timeouts.Timeouts(60, 7)
    with timeouts.capped(5):
        assert timeouts.current() == timeouts.Timeouts(5, 7)
        with timeouts.capped(90):  # a cap never raises the setting
            assert timeouts.current() == timeouts.Timeouts(60, 7)
        assert timeouts.current() == timeouts.Timeouts(5, 7)
    assert timeouts.current() == timeouts.Timeouts(60, 7)

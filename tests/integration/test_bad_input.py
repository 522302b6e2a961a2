"""The bad-input table: each row is one thing a careless or hostile user may write.

Every row asserts that the command fails with exit code 1 and exactly one ``snaprepl: error:`` line
(or, for the Python API, one :class:`SnapreplError` whose text is one line), that the line says what
the row expects, that no password appears in it, and that nothing changed: the test databases'
tables and their row counts, and ``snaprepl status --json``, are the same before and after.

Rows run in this process through the CLI's ``main()`` (the statements' and the ``ddl`` command's
whole path but the interpreter start), or through the Python API; a few run ``snaprepl`` as a
subprocess to prove the real command line. No row starts Spark: every refusal comes before a job.
The module's setup fills two snapshots once, with Spark in this process.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, replace
from typing import Any

import pytest

from snaprepl import api
from snaprepl.cli import main
from snaprepl.errors import SnapreplError
from tests.support.bad_input_rows import ROWS, SECRET
from tests.support.databases import RealDatabase

pytestmark = pytest.mark.spark  # the module's setup fills its snapshots with Spark (in this process)


@dataclass(frozen=True)
class World:
    """What the rows act on; ``names`` fill the rows' ``{placeholders}``."""

    dbs: tuple[RealDatabase, ...]
    tag: str
    names: dict[str, str]
    kwargs: dict[str, Any]


@pytest.fixture(scope="module")
def world(pg_db, mysql_db, sqlite_db, catalog, settings, refresher) -> Iterator[World]:
    tag = f"bi{uuid.uuid4().hex[:6]}"
    pg, my = pg_db, mysql_db
    src, snap, noninc = f"{tag}_src", f"{tag}_snap", f"{tag}_noninc"
    pg.run(
        f"CREATE TABLE {src} (id int PRIMARY KEY, v varchar(20))",
        f"INSERT INTO {src} VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        f"CREATE TABLE {tag}_full (id int PRIMARY KEY, v varchar(20))",
        f"INSERT INTO {tag}_full VALUES (999999, 'IMPORTANT')",
        f"CREATE TABLE {tag}_nokey (id int, v int)",
        f"CREATE VIEW {tag}_view AS SELECT * FROM {src}",
    )
    my.run(
        f"CREATE TABLE {tag}_full (id int PRIMARY KEY, v varchar(20))",
        f"INSERT INTO {tag}_full VALUES (999999, 'IMPORTANT')",
    )
    # A second connection id pointing at the same PostgreSQL database.
    alias = f"{tag}_pg_alias"
    os.environ[f"AIRFLOW_CONN_{alias.upper()}"] = os.environ[f"AIRFLOW_CONN_{pg.conn_id.upper()}"]
    kwargs = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{src}@{pg.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(None, f"{src}@{pg.conn_id}", None, f"{snap}@{my.conn_id}", **kwargs)
    # A chain: src (PostgreSQL) -> snap (MariaDB) -> noninc (SQLite), logs on snap and on noninc.
    api.repl_create_snapshot(f"SELECT id, v FROM {snap}@{my.conn_id}", f"{noninc}@{sqlite_db.conn_id}", **kwargs)
    api.repl_create_snapshot_log(f"{snap}@{my.conn_id}", catalog=catalog)
    api.repl_create_snapshot_log(f"{noninc}@{sqlite_db.conn_id}", catalog=catalog)
    # A published table, and a table whose log was created and dropped again.
    pg.run(f"CREATE TABLE {tag}_pub (id int PRIMARY KEY, v int)", f"CREATE TABLE {tag}_gone (id int PRIMARY KEY)")
    api.repl_snp_server(pg.conn_id, catalog=catalog)
    api.repl_create_snapshot_pub(f"{tag}_pub@{pg.conn_id}", 2, catalog=catalog)
    api.repl_create_snapshot_log(f"{tag}_gone@{pg.conn_id}", catalog=catalog)
    api.repl_drop_snapshot_log(f"{tag}_gone@{pg.conn_id}", catalog=catalog)
    # A forced purge (offset 0) deletes what snap had not applied: it needs a complete refresh.
    purged = api.repl_purge_snapshot_log(
        f"{src}@{pg.conn_id}",
        1,
        catalog=catalog,
        settings=replace(settings, snp_repl_purge_offset=0, snp_repl_tolerance_offset=0),
    )
    assert purged.stale, purged
    # Connections whose URLs carry a password (a database that does not exist; a wrong password).
    secret_pg, secret_my = f"{tag}_secret_pg", f"{tag}_secret_my"
    os.environ[f"AIRFLOW_CONN_{secret_pg.upper()}"] = f"postgresql://postgres:{SECRET}@127.0.0.1:5432/no_db_{tag}"
    os.environ[f"AIRFLOW_CONN_{secret_my.upper()}"] = f"mysql://root:{SECRET}@127.0.0.1:3306/{my.name}"
    names = {
        "tag": tag,
        "TAG": tag.upper(),
        "pgalias": alias,
        "secret_pg": secret_pg,
        "secret_my": secret_my,
        "pg": pg.conn_id,
        "my": my.conn_id,
        "lite": sqlite_db.conn_id,
        "src": f"{src}@{pg.conn_id}",
        "snap": f"{snap}@{my.conn_id}",
        "noninc": f"{noninc}@{sqlite_db.conn_id}",
        "snap_key": next(r.sn_name for r in catalog.snapshots() if r.sn_dest_table == snap),
    }
    yield World((pg_db, mysql_db, sqlite_db), tag, names, {"catalog": catalog, "settings": settings})
    for conn_id in (alias, secret_pg, secret_my):
        os.environ.pop(f"AIRFLOW_CONN_{conn_id.upper()}", None)


def _tables(db: RealDatabase) -> list[str]:
    sql = {
        "postgres": "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
        "mysql": f"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{db.name}'",
        "sqlite": "SELECT name FROM sqlite_master WHERE type = 'table'",
    }[db.dialect]
    return sorted(r[0] for r in db.rows(sql))


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def state(world: World) -> dict[str, Any]:
    """Every table of the test databases, the row counts of this module's, and the status report."""
    found: dict[str, Any] = {}
    for db in world.dbs:
        for table in _tables(db):
            count = db.rows(f"SELECT COUNT(*) FROM {db.q(table)}")[0][0] if world.tag in table.lower() else None
            found[f"{db.conn_id}:{table}"] = count
    code, out, err = _cli("status", "--json")
    assert code == 0, err
    found["status"] = json.loads(out)
    return found


# ---------------------------------------------------------------------------------------------- rows

_last: dict[str, Any] = {}


def _fill(value: Any, names: dict[str, str]) -> Any:
    return value.format(**names) if isinstance(value, str) else value


def _api(world: World, what: tuple[Any, ...]) -> tuple[int, str, str]:
    function: Callable[..., Any] = getattr(api, what[0])
    args = [_fill(a, world.names) for a in what[1:]]
    accepted = {k: v for k, v in world.kwargs.items() if k in inspect.signature(function).parameters}
    try:
        result = function(*args, **accepted)
    except SnapreplError as err:
        return 1, "", f"snaprepl: error: {err}\n"
    return 0, str(result), ""


def _subprocess(world: World, what: tuple[str, ...]) -> tuple[int, str, str]:
    result = subprocess.run(
        [sys.executable, "-m", "snaprepl", *(_fill(a, world.names) for a in what)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return result.returncode, result.stdout, result.stderr


def run_row(world: World, how: str, what: Any) -> tuple[int, str, str]:
    if how == "sql":
        return _cli("sql", _fill(what, world.names))
    if how == "ddl":
        return _cli("ddl", "log", "--dialect", what[0], "--table", "t", *[x for k in what[1:] for x in ("--key", k)])
    if how == "api":
        return _api(world, what)
    if how == "busy":  # while a live run holds the snapshot's lease, as a running refresh does
        from snaprepl.catalog.run_lock import RunLock, snapshot_lock_name

        lease = snapshot_lock_name(world.names["snap_key"])
        with RunLock(world.kwargs["catalog"], lease, "run-in-progress-42", what="test"):
            return _cli("sql", _fill(what, world.names))
    return _subprocess(world, what)


@pytest.mark.parametrize(("how", "what", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_input_is_one_line_and_changes_nothing(world: World, how: str, what: Any, expected: str) -> None:
    # The state after the previous row is this row's state before (rows run one after another).
    before = _last.pop("state", None) or state(world)
    code, out, err = run_row(world, how, what)
    lines = err.strip().splitlines()
    assert code == 1, (code, out, err)
    assert len(lines) == 1 and lines[0].startswith("snaprepl: error: "), err
    assert "error: unexpected " not in lines[0], lines[0]
    assert _fill(expected, world.names) in lines[0], lines[0]
    assert SECRET not in out + err
    after = state(world)
    assert after == before
    _last["state"] = after


def test_the_table_has_at_least_forty_rows() -> None:
    assert len(ROWS) >= 40
    assert len({r[0] for r in ROWS}) == len(ROWS)


def test_string_zero_drops_the_snapshot_but_keeps_its_table(world: World) -> None:
    """Issue 9.1: ``repl_drop_snapshot(d, '0')`` dropped the destination table ('0' is a true string)."""
    lite = next(db for db in world.dbs if db.dialect == "sqlite")
    code, out, err = _cli("sql", _fill("SELECT repl_drop_snapshot('{noninc}', '0')", world.names))
    assert code == 0, err
    assert "dropped" in out and "with its table" not in out
    assert lite.rows(f"SELECT COUNT(*) FROM {world.tag}_noninc")[0][0] == 3

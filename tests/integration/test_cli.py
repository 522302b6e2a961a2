"""The ``snaprepl`` command, run as a user runs it: a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.databases import RealDatabase

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def snaprepl(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snaprepl", *args],
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    assert result.returncode == 1, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("snaprepl: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture(params=["postgres", "sqlite"])
def logged(request: pytest.FixtureRequest, catalog, unique_name: str) -> tuple[RealDatabase, str]:
    """A table to log; every dialect's behaviour is covered by the API tests, the CLI by two of them."""
    db: RealDatabase = request.getfixturevalue({"postgres": "pg_db", "sqlite": "sqlite_db"}[request.param])
    db.run(f"CREATE TABLE {db.q(unique_name)} (id {db.int_type()} PRIMARY KEY, v {db.int_type()})")
    return db, unique_name


def test_statements_and_functions_from_the_command_line(logged) -> None:
    db, table = logged
    created = snaprepl("sql", f"create snapshot log for {table}@{db.conn_id}")
    assert created.returncode == 0, created.stderr
    assert f"snapshot log created for {db.schema}.{table}@{db.conn_id}" in created.stdout
    db.run(f"INSERT INTO {db.q(table)} VALUES (1, 1)")
    both = snaprepl(
        "sql", f"PURGE SNAPSHOT LOG FOR {table}@{db.conn_id}; repl_drop_snapshot_log('{table}@{db.conn_id}');"
    )
    assert both.returncode == 0, both.stderr
    assert "nothing purged" in both.stdout and "snapshot log dropped" in both.stdout
    assert db.triggers_on(table) == []


def test_statements_from_a_file_and_from_stdin(logged, tmp_path: Path) -> None:
    db, table = logged
    script = tmp_path / "setup.sql"
    script.write_text(f"-- set up\nCREATE SNAPSHOT LOG FOR {table}@{db.conn_id};\n")
    assert snaprepl("sql", "-f", str(script)).returncode == 0
    dropped = snaprepl("sql", "-f", "-", stdin=f"DROP SNAPSHOT LOG FOR {table}@{db.conn_id}")
    assert dropped.returncode == 0 and "dropped" in dropped.stdout


def test_status_is_readable_and_machine_readable(logged) -> None:
    db, table = logged
    snaprepl("sql", f"create snapshot log for {table}@{db.conn_id}")
    db.run(f"INSERT INTO {db.q(table)} VALUES (1, 1)", f"INSERT INTO {db.q(table)} VALUES (2, 1)")
    text = snaprepl("status")
    assert text.returncode == 0 and f"{table}@{db.conn_id}" in text.stdout and f"RLOG_{table}" in text.stdout
    report = json.loads(snaprepl("status", "--json").stdout)
    entry = next(e for e in report["snapshot_logs"] if e["source"] == f"{db.schema}.{table}@{db.conn_id}")
    assert entry["backlog"]["rows"] == 2 and entry["key_columns"] == ["id"]
    assert entry["triggers"] == [f"{db.schema}_{table}_{op}_log" for op in "IUD"]


def test_errors_are_one_line_and_exit_non_zero(catalog) -> None:
    assert_one_line_error(snaprepl("sql", "create snapshot logs for x"), "syntax error at line 1, column 22")
    assert_one_line_error(
        snaprepl("sql", "create snapshot log for x@undefined_conn"), "'undefined_conn' is not defined"
    )
    assert_one_line_error(snaprepl("sql", "repl_create_snapshot_logg('x')"), "did you mean repl_create_snapshot_log")
    assert_one_line_error(snaprepl("sql", "-f", "/no/such/file.sql"), "does not exist")


def test_failure_in_a_later_statement_says_which_and_keeps_earlier_ones(logged) -> None:
    db, table = logged
    result = snaprepl(
        "sql", f"create snapshot log for {table}@{db.conn_id}; create snapshot log for {table}@{db.conn_id}"
    )
    assert_one_line_error(result, "statement 2:", "already exists", "statements 1-1 were done")
    assert db.table_exists(f"RLOG_{table}")


def test_passwords_never_appear_in_output(catalog) -> None:
    secret = "pa55-w0rd-s3cret"
    result = snaprepl(
        "sql",
        "create snapshot log for t@with_secret",
        env={"AIRFLOW_CONN_WITH_SECRET": f"mysql://root:{secret}@127.0.0.1:3306/mysql"},
    )
    assert_one_line_error(result, "cannot connect to connection 'with_secret'")
    assert secret not in result.stdout + result.stderr


@pytest.mark.parametrize("dialect", ["mssql", "oracle", "db2", "informix"])
def test_generated_ddl_for_the_seed_dialects(dialect: str) -> None:
    from tests.unit.test_ddl_golden import TABLE

    table, keys = TABLE[dialect]
    args = ["ddl", "log", "--dialect", dialect, "--table", table]
    for key in keys:
        args += ["--key", key]
    result = snaprepl(*args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / f"snapshot_log_create_{dialect}.sql").read_text() + "\n"


def test_a_reader_that_stops_early_ends_the_output_quietly() -> None:
    """``snaprepl ddl ... | head``: the closed pipe is no error to report."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "snaprepl",
            "ddl",
            "bidir",
            "--dialect",
            "oracle",
            "--table",
            "sales.orders",
            "--key",
            "order_id NUMBER(10)",
            "--server",
            "hq",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    process.stdout.close()  # before the command has printed anything: its first write meets a closed pipe
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 141
    assert stderr == "", stderr


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("snaprepl")
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "sql" in result.stdout and "status" in result.stdout

"""Names and values from the databases reach the operator's terminal escaped (issue 27, item 3): a
key column named with an OSC title and SGR colour sequence, a table name with the C1 control U+009B,
and a source value quoted by a database error, through the real ``snaprepl`` command."""

from __future__ import annotations

import json
import re

from tests.integration.test_cli import snaprepl

TITLE = "k\x1b]0;PWNED\x07\x1b[31m"
ESCAPED_TITLE = "k\\x1b]0;PWNED\\x07\\x1b[31m"
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # every control character but a newline


def _no_raw_control(result) -> None:  # type: ignore[no-untyped-def]
    assert not RAW_CONTROL.search(result.stdout), result.stdout
    assert not RAW_CONTROL.search(result.stderr), result.stderr


def test_status_history_and_error_lines_print_no_raw_control_character(pg_db, catalog, unique_name) -> None:
    src, c1_table = f"{unique_name}_s", f"{unique_name}_\u009b"
    pg_db.run(
        f'CREATE TABLE {src} ("{TITLE}" int PRIMARY KEY, v text)',
        f"INSERT INTO {src} VALUES (1, '1')",
        f'CREATE TABLE "{c1_table}" (id int PRIMARY KEY, v text)',
    )
    created = snaprepl("sql", f"CREATE SNAPSHOT LOG FOR {src}@{pg_db.conn_id}")
    assert created.returncode == 0, created.stderr
    # A writer of a source row puts a terminal sequence (OSC 52: the clipboard) in a value that the
    # snapshot's query cannot cast: the database's error quotes it.
    pg_db.run(f"UPDATE {src} SET v = %s", params=[f"{TITLE}\x1b]52;c;cHduZWQ=\x07"])
    query = f'SELECT "{TITLE}" AS id, CAST(v AS int) AS n FROM {src}@{pg_db.conn_id}'
    failed = snaprepl("sql", f"CREATE NONINCREMENTAL SNAPSHOT {unique_name}@{pg_db.conn_id} AS '{query}'")
    assert failed.returncode == 1 and "invalid input syntax for type integer" in failed.stderr, failed.stderr
    assert ESCAPED_TITLE in failed.stderr
    _no_raw_control(failed)

    status = snaprepl("status")
    assert status.returncode == 0, status.stderr
    assert ESCAPED_TITLE in status.stdout, "the key column, escaped"
    _no_raw_control(status)
    history = snaprepl("history", f"public.{unique_name}@{pg_db.conn_id}")
    assert history.returncode == 0 and "failed" in history.stdout, history.stdout
    _no_raw_control(history)
    runs = json.loads(snaprepl("history", f"public.{unique_name}@{pg_db.conn_id}", "--json").stdout)
    assert TITLE in runs[0]["error"], "JSON keeps the exact text (escaped by JSON itself)"

    # A table name carrying U+009B (C1 CSI) is refused, and the refusal quotes it escaped.
    refused = snaprepl("sql", f'CREATE SNAPSHOT LOG FOR "{c1_table}"@{pg_db.conn_id}')
    assert refused.returncode == 1 and "control characters" in refused.stderr, refused.stderr
    _no_raw_control(refused)

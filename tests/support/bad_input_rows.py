"""The rows of the bad-input table (tests/integration/test_bad_input.py).

Each row: (id, how, what, expected fragment of the error line). ``how``: "sql" runs ``snaprepl sql
WHAT``; "ddl" runs ``snaprepl ddl log --dialect WHAT[0] --key WHAT[1] ...``; "api" calls the Python
function named by WHAT[0] with the rest as arguments; "cli" runs ``snaprepl *WHAT`` as a subprocess;
"busy" runs ``snaprepl sql WHAT`` while a live run holds the snapshot's lease. ``{placeholders}``
are the names of the test's world.
"""

from __future__ import annotations

import inspect
from typing import Any

from snaprepl import api
from snaprepl.common.arguments import positional

#: The password of the connections whose URLs carry one; it must appear in no output.
SECRET = "S3cr3t-pw-9f1c"

Row = tuple[str, str, Any, str]

ROWS: list[Row] = [
    # issue 9.1: flags are parsed strictly
    ("drop-flag-string-0", "sql", "SELECT repl_drop_snapshot('{snap}', '00')", "delete must be 0, 1, true or false"),
    ("drop-flag-no", "sql", "repl_drop_snapshot('{snap}', 'no')", "delete must be 0, 1, true or false"),
    ("drop-flag-half", "sql", "repl_drop_snapshot('{snap}', 0.5)", "got float 0.5"),
    ("drop-flag-2", "sql", "repl_drop_snapshot('{snap}', 2)", "delete must be 0, 1, true or false, got int 2"),
    ("drop-flag-empty", "sql", "repl_drop_snapshot('{snap}', '')", "got ''"),
    ("drop-flag-null", "sql", "repl_drop_snapshot('{snap}', NULL)", "got None"),
    ("purge-force-no", "sql", "repl_purge_snapshot_log('{src}', 'no')", "force must be 0, 1, true or false"),
    ("purge-force-half", "sql", "repl_purge_snapshot_log('{src}', 0.5)", "force must be 0, 1, true or false"),
    ("purge-force-yes", "sql", "repl_purge_snapshot_log('{src}', 'YES')", "got 'YES'"),
    ("api-drop-flag-no", "api", ("repl_drop_snapshot", "{snap}", "no"), "delete must be 0, 1, true or false"),
    ("api-purge-flag-half", "api", ("repl_purge_snapshot_log", "{src}", 0.5), "force must be 0, 1, true or false"),
    ("cli-drop-flag-no", "cli", ("sql", "repl_drop_snapshot('{snap}', 'no')"), "delete must be 0, 1, true or false"),
    # issue 9.2: a destination that holds rows is filled only with USING EXISTING TABLE
    ("create-over-rows", "sql", "CREATE SNAPSHOT {tag}_full@{my} FROM {src}", "already exists and holds rows"),
    (
        "create-noninc-over-rows",
        "sql",
        "CREATE NONINCREMENTAL SNAPSHOT {tag}_full@{pg} AS 'SELECT id, v FROM {tag}_src@{pg}'",
        "add USING EXISTING TABLE",
    ),
    (
        "fn-create-over-rows",
        "sql",
        "repl_create_snapshot('SELECT id, v FROM {tag}_src@{pg}', '{tag}_full@{pg}')",
        "holds rows",
    ),
    (
        "api-create-inc-over-rows",
        "api",
        ("repl_create_inc_snapshot", None, "{src}", None, "{tag}_full@{my}"),
        "holds rows",
    ),
    (
        "using-existing-missing",
        "sql",
        "CREATE SNAPSHOT {tag}_missing@{my} FROM {src} USING EXISTING TABLE",
        "does not exist",
    ),
    (
        "fn-use-existing-flag",
        "sql",
        "repl_create_inc_snapshot(NULL, '{src}', NULL, '{tag}_full@{my}', NULL, 'maybe')",
        "use_existing must be 0, 1, true or false",
    ),
    # issue 14.2: a snapshot may not overwrite its own source, directly or through a chain
    (
        "self-target-noninc",
        "sql",
        "CREATE NONINCREMENTAL SNAPSHOT {tag}_src@{pg} AS 'SELECT * FROM {tag}_src@{pg} WHERE id < 3'",
        "would write into its own source",
    ),
    (
        "self-target-prebuilt",
        "sql",
        "CREATE NONINCREMENTAL SNAPSHOT {tag}_src@{pg} AS 'SELECT * FROM {tag}_src@{pg} WHERE id < 3' "
        "USING EXISTING TABLE",
        "would write into its own source",
    ),
    (
        "self-target-case-and-quotes",
        "sql",
        "CREATE NONINCREMENTAL SNAPSHOT public.\"{tag}_src\"@{pg} AS 'SELECT id FROM PUBLIC.{TAG}_SRC@{pg}' "
        "ON PREBUILT TABLE",
        "would write into its own source",
    ),
    (
        "self-target-other-conn-id",
        "sql",
        "CREATE NONINCREMENTAL SNAPSHOT {tag}_src@{pgalias} AS 'SELECT * FROM {tag}_src@{pg}' USING EXISTING TABLE",
        "would write into its own source",
    ),
    (
        "self-target-incremental",
        "sql",
        "CREATE SNAPSHOT {tag}_src@{pgalias} FROM {src} USING EXISTING TABLE",
        "would write into its own source",
    ),
    (
        "self-target-through-chain",
        "sql",
        "CREATE NONINCREMENTAL SNAPSHOT {tag}_src@{pg} AS 'SELECT * FROM {tag}_snap@{my}' USING EXISTING TABLE",
        "which it feeds through snapshot",
    ),
    # issue 14.3: WITH DELETE keeps a table others read
    ("drop-delete-feeds", "sql", "DROP SNAPSHOT {snap} WITH DELETE", "feeds snapshot"),
    ("fn-drop-delete-feeds", "sql", "repl_drop_snapshot('{snap}', 1)", "WITH DELETE would leave them without a source"),
    ("drop-delete-has-log", "sql", "DROP SNAPSHOT {noninc} WITH DELETE", "carries snapshot log"),
    ("api-drop-delete-has-log", "api", ("repl_drop_snapshot", "{noninc}", True), "carries snapshot log"),
    # issue 14.4: no drop while a refresh runs
    ("drop-while-refreshing", "busy", "DROP SNAPSHOT {snap}", "cannot drop: snapshot {snap_key} is busy with run"),
    ("fn-drop-while-refreshing", "busy", "repl_drop_snapshot('{snap}', 0)", "run-in-progress-42"),
    # issue 14.8: `snaprepl ddl --key` takes one column type
    ("ddl-key-injection", "ddl", ("oracle", "id NUMBER); DROP TABLE victim; --"), "is not a single column type"),
    ("ddl-key-default", "ddl", ("postgres", "id int DEFAULT 1"), "is not a single column type"),
    ("ddl-key-unknown-type", "ddl", ("mysql", "id no_such_type"), "key column id: column type 'no_such_type'"),
    ("ddl-key-no-type", "ddl", ("postgres", "id"), "needs a name and a type"),
    # issue 14.9: one clear line instead of a traceback or "unexpected ..."
    (
        "fn-inc-number-columns",
        "sql",
        "repl_create_inc_snapshot(1, '{src}', NULL, '{tag}_new@{my}')",
        "argument source_column_list must be a string or NULL, got int 1",
    ),
    (
        "fn-inc-number-condition",
        "sql",
        "repl_create_inc_snapshot(NULL, '{src}', 5, '{tag}_new@{my}')",
        "argument condition must be a string or NULL",
    ),
    (
        "dest-is-a-view",
        "sql",
        "CREATE NONINCREMENTAL SNAPSHOT {tag}_view@{pg} AS 'SELECT id, v FROM {tag}_src@{pg}'",
        "is not a table",
    ),
    ("dest-schema-missing", "sql", "CREATE SNAPSHOT no_such_schema.{tag}_x@{pg} FROM {src}", "schema no_such_schema"),
    ("deep-nesting", "sql", "repl_purge_rplogs(" * 3000 + ")" * 3000, "nested more than 32 deep"),
    ("sql-empty", "sql", "", "nothing to run"),
    ("sql-semicolons", "sql", ";;;", "nothing to run"),
    ("sql-only-comments", "sql", "-- nothing here\n/* nor here */", "nothing to run"),
    ("api-none", "api", ("repl_create_snapshot_log", None), "argument source_table must be a string, got None"),
    ("api-bytes", "api", ("repl_drop_snapshot", b"x@y"), "must be a string, got bytes b'x@y'"),
    ("api-list", "api", ("repl_refresh_inc_snapshot", ["{snap}"]), "got list"),
    ("api-int", "api", ("repl_drop_snapshot_log", 7), "got int 7"),
    ("api-too-many", "api", ("repl_drop_snapshot_log", "{src}", 1), "repl_drop_snapshot_log(source_table) got 2"),
    (
        "inner-call-checked-first",
        "sql",
        "repl_create_snapshot_log(repl_purge_rplogs())",
        "argument source_table cannot be the result of repl_purge_rplogs()",
    ),
    ("cli-empty", "cli", ("sql", ""), "nothing to run"),
    # issue 14.10: no log on a log; cron has 5 fields
    ("log-on-a-log", "sql", 'CREATE SNAPSHOT LOG FOR "RLOG_{tag}_src"@{pg}', "one of snaprepl's own tables"),
    ("log-on-a-log-mariadb", "sql", "CREATE SNAPSHOT LOG FOR `RLOG_{tag}_snap`@{my}", "cannot be logged"),
    ("fn-log-on-a-log", "sql", "repl_create_snapshot_log('\"RLOG_{tag}_noninc\"@{lite}')", "cannot be logged"),
    (
        "snapshot-into-a-log",
        "sql",
        "CREATE NONINCREMENTAL SNAPSHOT \"RLOG_{tag}_src\"@{pg} AS 'SELECT id FROM {tag}_src@{pg}' "
        "USING EXISTING TABLE",
        "cannot be a snapshot's destination",
    ),
    ("cron-6-fields", "sql", "ALTER SNAPSHOT {snap} SCHEDULE '*/5 * * * * *'", "has 6 fields"),
    (
        "fn-cron-6-fields",
        "sql",
        "repl_set_snapshot_schedule('{snap}', '0 */5 * * * *')",
        "a 6th field would be read as seconds",
    ),
    ("cron-words", "sql", "ALTER SNAPSHOT {snap} SCHEDULE 'every day'", "is not a cron expression or preset"),
    # malformed statements
    ("malformed-truncated", "sql", "CREATE SNAPSHOT", "syntax error at line 1"),
    ("malformed-typo", "sql", "create snapshot logs for x", "syntax error at line 1"),
    ("malformed-open-quote", "sql", "CREATE SNAPSHOT LOG FOR 'x", "syntax error"),
    ("malformed-with", "sql", "DROP SNAPSHOT {snap} WITH", "syntax error"),
    ("malformed-as-incremental", "sql", "UPDATE SNAPSHOT {snap} AS INCREMENTAL", "syntax error"),
    ("malformed-second-statement", "sql", "DROP SNAPSHOT LOG FOR {src}; DROP SNAPSHOT LOG", "syntax error"),
    (
        "malformed-unknown-function",
        "sql",
        "repl_create_snapshot_logg('{src}')",
        "did you mean repl_create_snapshot_log",
    ),
    # SQL in names, conditions and column lists
    (
        "sql-in-condition",
        "sql",
        "CREATE SNAPSHOT {tag}_x@{my} FROM {src} WHERE 'v = 1; DROP TABLE {tag}_src'",
        "statements",
    ),
    ("sql-in-condition-paren", "sql", "CREATE SNAPSHOT {tag}_x@{my} FROM {src} WHERE 'v = 1) OR (1 = 1'", "condition"),
    ("sql-in-column-list", "sql", "CREATE SNAPSHOT {tag}_x@{my} FROM {src} 'v, (SELECT 1)'", "not a plain column name"),
    (
        "sql-as-query",
        "sql",
        "CREATE NONINCREMENTAL SNAPSHOT {tag}_x@{my} AS 'DELETE FROM {tag}_src@{pg}'",
        "not a SELECT",
    ),
    ("sql-in-quoted-name", "sql", 'CREATE SNAPSHOT LOG FOR "x; DROP TABLE {tag}_src"@{pg}', "x; DROP TABLE"),
    ("sql-in-name-string", "sql", "repl_create_snapshot_log('{tag}_src; DROP TABLE x@{pg}')", "not a table reference"),
    # unicode, quoted, mixed-case and very long identifiers
    ("unicode-name", "sql", 'CREATE SNAPSHOT LOG FOR "ünïcødé_{tag}"@{pg}', "ünïcødé_{tag}"),
    ("quoted-upper-name", "sql", 'CREATE SNAPSHOT LOG FOR "{TAG}_SRC"@{pg}', "{TAG}_SRC"),
    ("mixed-case-snapshot", "sql", 'DROP SNAPSHOT "{TAG}_Snap"@{my}', "there is no snapshot"),
    ("long-name", "sql", "CREATE SNAPSHOT LOG FOR " + "x" * 200 + "@{pg}", "longer than 128 characters"),
    ("control-char-name", "sql", 'CREATE SNAPSHOT LOG FOR "a\x01b"@{pg}', "control characters"),
    # unknown connections and servers
    ("unknown-conn", "sql", "CREATE SNAPSHOT LOG FOR t@no_such_conn_{tag}", "'no_such_conn_{tag}' is not defined"),
    ("unknown-conn-dest", "sql", "CREATE SNAPSHOT {tag}_x@no_such_conn_{tag} FROM {src}", "is not defined"),
    (
        "unknown-server-sub",
        "sql",
        "REPL_CREATE_SNAPSHOT_SUB('no_such_server', '{tag}_pub@{pg}', 2)",
        "no replication server",
    ),
    ("unregistered-server", "sql", "REPL_SERVER_NAME('{pgalias}')", "is not a registered replication server"),
    (
        "publication-type-1",
        "sql",
        "REPL_CREATE_SNAPSHOT_PUB('{src}', 1)",
        "is not written as /path/collection/@conn_id",
    ),
    # dropping objects in use; a dropped log
    ("drop-log-in-use", "sql", "DROP SNAPSHOT LOG FOR {src}", "feeds snapshots"),
    ("drop-log-of-publication", "sql", "DROP SNAPSHOT LOG FOR {tag}_pub@{pg}", "bi-directional replication"),
    ("purge-dropped-log", "sql", "PURGE SNAPSHOT LOG FOR {tag}_gone@{pg} FORCE", "there is no snapshot log"),
    ("refresh-purged-log", "sql", "UPDATE SNAPSHOT {snap}", "needs a complete refresh: forced purge of"),
    (
        "fn-refresh-purged-log",
        "sql",
        "repl_refresh_inc_snapshot('{snap}')",
        "UPDATE SNAPSHOT {snap_key} AS NONINCREMENTAL",
    ),
    ("create-inc-from-dropped-log", "sql", "CREATE SNAPSHOT {tag}_x@{my} FROM {tag}_gone@{pg}", "needs a snapshot log"),
    # conflict resolvers: one that cannot be imported, wrong kinds
    (
        "resolver-broken",
        "sql",
        "REPL_ADD_SNAPSHOT_CR('{tag}_pub@{pg}', 'x', 'U', 1, 'no_such_module_{tag}:resolve')",
        "cannot be imported",
    ),
    ("resolver-bad-type", "sql", "REPL_ADD_SNAPSHOT_CR('{tag}_pub@{pg}', 'x', 'Q', 1, 'pub_wins')", "conflict type"),
    (
        "resolver-order-string",
        "sql",
        "REPL_ADD_SNAPSHOT_CR('{tag}_pub@{pg}', 'x', 'U', 'one', 'pub_wins')",
        "argument order must be an integer",
    ),
    # credentials in connection URLs never show
    ("secret-pg-log", "sql", "CREATE SNAPSHOT LOG FOR t@{secret_pg}", "connection '{secret_pg}'"),
    ("secret-pg-dest", "sql", "CREATE SNAPSHOT {tag}_x@{secret_pg} FROM {src}", "connection '{secret_pg}'"),
    (
        "secret-my-query",
        "sql",
        "CREATE NONINCREMENTAL SNAPSHOT {tag}_x@{my} AS 'SELECT 1 AS x FROM t@{secret_my}'",
        "{secret_my}",
    ),
    ("cli-secret", "cli", ("sql", "CREATE SNAPSHOT LOG FOR t@{secret_my}"), "connection '{secret_my}'"),
    (
        "cli-self-target",
        "cli",
        ("sql", "CREATE SNAPSHOT {tag}_src@{pgalias} FROM {src} USING EXISTING TABLE"),
        "own source",
    ),
]


def _function_rows() -> list[Row]:
    """For every function of the function forms: too many arguments, none, and a number for a string."""
    rows: list[Row] = []
    for name, function in sorted(api.FUNCTIONS.items()):
        params = positional(function)
        required = [p for p in params if p.default is inspect.Parameter.empty]
        too_many = ", ".join(["'x'"] * (len(params) + 1))
        rows.append((f"count-{name}-too-many", "sql", f"{name.upper()}({too_many})", f"got {len(params) + 1} argument"))
        if required:
            rows.append((f"count-{name}-none", "sql", f"CALL {name}()", "got 0 argument(s)"))
            rest = ", 'x'" * (len(required) - 1)
            rows.append((f"type-{name}", "sql", f"SELECT {name}(12345{rest})", f"argument {params[0].name} must be"))
    return rows


ROWS += _function_rows()

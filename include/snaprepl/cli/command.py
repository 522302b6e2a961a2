"""The ``snaprepl`` command.

Success exits 0; any failure exits 1 with one line ``snaprepl: error: <what is wrong and what to do>``
(2 for a malformed command line).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from snaprepl.common.airflow_config import when_airflow_loads
from snaprepl.common.terminal import visible
from snaprepl.errors import SnapreplError
from snaprepl.settings import Settings

STATEMENTS_HELP = """\
statements (case-insensitive, ';'-separated; names are [schema.]table[@conn_id]):
  CREATE SNAPSHOT LOG FOR t                      DROP SNAPSHOT LOG FOR t
  PURGE SNAPSHOT LOG FOR t [FORCE]
  CREATE NONINCREMENTAL SNAPSHOT d AS 'SELECT ... FROM t@conn ...' [USING EXISTING TABLE] [SCHEDULE 'cron']
  CREATE SNAPSHOT d FROM t ['col, ...'] [WHERE 'condition'] [USING EXISTING TABLE] [SCHEDULE 'cron']
  (USING EXISTING TABLE: fill a destination that holds rows; rows the query does not return are deleted)
  UPDATE SNAPSHOT d [AS NONINCREMENTAL]          DROP SNAPSHOT d [WITH DELETE]
  ALTER SNAPSHOT d SCHEDULE 'cron' | NONE
functions (the seed's names), e.g.:
  repl_create_snapshot_log('orders@src')         repl_create_inc_snapshot('a, b', 'src', 'a > 1', 'dst')
  repl_refresh_inc_snapshot('dst')               repl_refresh_noninc_snapshot('dst')
  repl_drop_snapshot('dst', 1)                   repl_purge_rplogs()
"""


def _add_sql(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sql = commands.add_parser(
        "sql",
        help="run statements",
        description="Run snaprepl statements.",
        epilog=STATEMENTS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sql.add_argument("statements", nargs="?", help="statements to run; omit with -f")
    sql.add_argument("-f", "--file", help="read statements from FILE ('-' for standard input)")
    sql.add_argument("-v", "--verbose", action="store_true", help="show the output of Spark jobs")


def _add_status(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    status = commands.add_parser("status", help="show the catalog")
    status.add_argument("--json", action="store_true", help="print JSON for machines")
    status.add_argument("--no-probe", action="store_true", help="do not connect to sources to count backlogs")


def _add_history(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    history = commands.add_parser("history", help="show past refreshes, pulls, pushes and initial loads, newest first")
    history.add_argument(
        "copy", nargs="?", help="a snapshot (schema.table@conn_id) or publication item; all if omitted"
    )
    history.add_argument("--json", action="store_true", help="print JSON for machines")
    history.add_argument("--limit", type=_positive, default=50, help="most runs shown (default 50)")


def _add_verify(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify = commands.add_parser(
        "verify",
        help="compare a copy with its source (exit 3: differences), and with --repair fix what differs",
        description="Compare a snapshot with its query evaluated at the source now: rows missing from the "
        "copy, extra in it, and different. Exit status 0 when equal, 3 when differences remain, 1 on an error.",
    )
    verify.add_argument("copy", help="the snapshot, schema.table@conn_id as `snaprepl status` lists it")
    verify.add_argument("--repair", action="store_true", help="apply the source's rows for the keys that differ")
    verify.add_argument("--json", action="store_true", help="print JSON for machines")
    verify.add_argument("--where", metavar="COND", help="compare only rows matching COND (in the source's SQL)")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def _table_options(parser: argparse.ArgumentParser, dialects: str) -> None:
    """The options that say which table of which dialect a ``ddl`` subcommand prints DDL for."""
    parser.add_argument("--dialect", required=True, help=dialects)
    parser.add_argument("--table", required=True, help="[schema.]table")
    parser.add_argument(
        "--key", action="append", required=True, metavar="'COLUMN TYPE'", help="a primary key column (repeat)"
    )


def _add_ddl(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ddl = commands.add_parser(
        "ddl",
        help="print generated DDL without connecting",
        description="Print the DDL of a snapshot log for any dialect, e.g. to run it by hand on SQL Server, "
        "Oracle, DB2 or Informix.",
    )
    ddl_kinds = ddl.add_subparsers(dest="kind", required=True)
    log_ddl = ddl_kinds.add_parser("log", help="DDL of a snapshot log (RLOG table and triggers)")
    _table_options(log_ddl, "postgres, mysql, sqlite, mssql, oracle, db2, informix")
    log_ddl.add_argument("--drop", action="store_true", help="print the DROP statements instead")
    bidir_ddl = ddl_kinds.add_parser(
        "bidir", help="DDL of a bi-directionally replicated table (ROWGUID, bi-directional log, triggers)"
    )
    _table_options(bidir_ddl, "postgres, mysql, sqlite, mssql, oracle, db2")
    bidir_ddl.add_argument("--server", required=True, help="the replication name of the table's server")
    bidir_ddl.add_argument("--subscriber", action="store_true", help="a subscriber's replica (default: publisher)")
    bidir_ddl.add_argument("--drop", action="store_true", help="print the DROP statements instead")


def _add_catalog(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    catalog = commands.add_parser("catalog", help="manage the catalog tables")
    catalog_actions = catalog.add_subparsers(dest="action", required=True)
    catalog_actions.add_parser("upgrade", help="create or migrate the SYS_* tables in the catalog database")
    catalog_actions.add_parser("where", help="print where the catalog is")
    grant = catalog_actions.add_parser(
        "grant", help="create or update a role that can use only snaprepl's catalog tables (for snaprepl_catalog)"
    )
    grant.add_argument("role", help="the role (PostgreSQL) or user (MariaDB) to create or update")
    grant.add_argument(
        "--password-env",
        metavar="VAR",
        help="environment variable holding the role's password (never on the command line)",
    )
    grant.add_argument("--host", default="%", help="MariaDB: the account's host part (default %%)")


def _add_spark_server(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    server = commands.add_parser(
        "spark-server",
        help="start, stop or check a local Spark Connect server (spark_mode = connect)",
        description="A Spark Connect server on loopback for connect mode; its pid file and log are in "
        "$SNAPREPL_STATE_DIR (default ~/.local/state/snaprepl).",
    )
    actions = server.add_subparsers(dest="action", required=True)
    start = actions.add_parser("start", help="start it and print the Airflow connection to define")
    start.add_argument("--port", type=int, default=15002, help="port on 127.0.0.1 (default 15002)")
    start.add_argument("--master", help="Spark master, e.g. spark://host:7077 (default [snaprepl] spark_master)")
    start.add_argument("--conn-id", help="the connection's id in the printed line (default [snaprepl] spark_conn_id)")
    actions.add_parser("stop", help="stop it and its processes")
    actions.add_parser("status", help="say whether it runs and answers")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="snaprepl",
        description="Trigger-based snapshot replication orchestrated by Airflow and executed by Spark.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for add in (_add_sql, _add_status, _add_history, _add_verify, _add_ddl, _add_catalog, _add_spark_server):
        add(commands)
    return parser


def _read_statements(args: argparse.Namespace) -> str:
    if args.file and args.statements:
        raise SnapreplError("give statements or -f FILE, not both")
    if args.file == "-":
        return sys.stdin.read()
    if args.file:
        path = Path(args.file)
        if not path.is_file():
            raise SnapreplError(f"file {path} does not exist")
        return path.read_text()
    if args.statements is None:
        raise SnapreplError("no statements given", "pass them as an argument or with -f FILE")
    statements: str = args.statements
    return statements


# Each command imports what it runs when it runs (statements load the grammar, the catalog SQLAlchemy
# and Alembic): `snaprepl --help` loads none of them and starts in milliseconds.
def _sql(args: argparse.Namespace) -> None:
    from snaprepl.api.script import run_script  # noqa: PLC0415  (heavy: lark, alembic, airflow)
    from snaprepl.statements.parser import parse_script  # noqa: PLC0415  (heavy: lark)

    text = _read_statements(args)
    if not parse_script(text):
        raise SnapreplError("nothing to run: no statement was given", "write statements, e.g. `snaprepl sql --help`")
    for result in run_script(text, settings=Settings.load()):
        if result is not None:
            print("\n".join(visible(line) for line in str(result).splitlines()))


def _status(args: argparse.Namespace) -> None:
    from snaprepl.catalog.store import Catalog  # noqa: PLC0415  (heavy: alembic)
    from snaprepl.reporting.status import collect_status, render_json, render_text  # noqa: PLC0415  (heavy: alembic)

    settings = Settings.load()
    report = collect_status(Catalog.open(settings), settings, probe=not args.no_probe)
    print(render_json(report) if args.json else render_text(report))


def _history(args: argparse.Namespace) -> None:
    from snaprepl.catalog.store import Catalog  # noqa: PLC0415  (heavy: alembic)
    from snaprepl.reporting.render import render_history, render_history_json  # noqa: PLC0415

    runs = Catalog.open(Settings.load()).history(args.copy, limit=args.limit)
    print(render_history_json(runs) if args.json else render_history(runs))


def _verify(args: argparse.Namespace) -> int:
    from snaprepl.api import repl_repair_snapshot, repl_verify_snapshot  # noqa: PLC0415  (heavy: lark, alembic)

    verify = repl_repair_snapshot if args.repair else repl_verify_snapshot
    outcome = verify(args.copy, args.where, settings=Settings.load())
    print(json.dumps(outcome.to_json()) if args.json else outcome)
    from snaprepl.airflow.cli_metrics import send_verify_metrics  # noqa: PLC0415

    send_verify_metrics(outcome.to_dict())  # as the verify DAG: snaprepl.verify.differences
    return outcome.exit_code


def _ddl(args: argparse.Namespace) -> None:
    from snaprepl.cli.ddl import bidir_log_ddl, snapshot_log_ddl  # noqa: PLC0415  (heavy: lark, sqlglot)

    if args.kind == "bidir":
        print(
            bidir_log_ddl(
                args.dialect, args.table, args.key, args.server, publisher=not args.subscriber, drop=args.drop
            )
        )
    else:
        print(snapshot_log_ddl(args.dialect, args.table, args.key, drop=args.drop))


def _catalog(args: argparse.Namespace) -> None:
    from snaprepl.catalog.grants import grant_catalog_role, password_from_env  # noqa: PLC0415  (heavy: sqlalchemy)
    from snaprepl.catalog.migrate import upgrade  # noqa: PLC0415  (heavy: alembic)
    from snaprepl.catalog.store import Catalog  # noqa: PLC0415  (heavy: alembic)

    catalog = Catalog.open(Settings.load())
    if args.action == "upgrade":
        upgrade(catalog.engine)
        print(f"catalog migrated in {catalog.describe()}")
    elif args.action == "grant":
        print(grant_catalog_role(catalog.engine, args.role, password_from_env(args.password_env), mysql_host=args.host))
    else:
        print(catalog.describe())


def _spark_server(args: argparse.Namespace) -> None:
    from snaprepl.submit import server  # noqa: PLC0415  (loads the submission layer when used)

    if args.action == "start":
        settings = Settings.load()
        info = server.start(args.port, master=args.master or settings.spark_master,
                            driver_memory=settings.spark_driver_memory)  # fmt: skip
        print(f"Spark Connect server started (pid {info.pid}, 127.0.0.1:{info.port}, master {info.master})")
        print(f"log: {info.log}")
        print("define the Spark connection (its token is shown only now):")
        print(info.connection(args.conn_id or settings.spark_conn_id))
    elif args.action == "stop":
        stopped = server.stop()
        print(f"Spark Connect server stopped (pid {stopped.pid})" if stopped else "no Spark Connect server runs")
    else:
        found = server.running()
        if found is None:
            dead = server.died()
            what = f"the Spark Connect server (pid {dead}) died" if dead else "no Spark Connect server runs"
            raise SnapreplError(what, "start one with `snaprepl spark-server start`")
        state = "answers" if server.answers(found.port) else "does not answer (starting, or stuck: see its log)"
        restarted = f", restarted {found.restarts} times" if found.restarts else ""
        print(
            f"Spark Connect server pid {found.server_pid} on 127.0.0.1:{found.port} {state} (supervisor pid "
            f"{found.pid}{restarted}); log: {found.log}"
        )


COMMANDS: dict[str, Callable[[argparse.Namespace], int | None]] = {
    "sql": _sql,
    "status": _status,
    "history": _history,
    "verify": _verify,
    "ddl": _ddl,
    "catalog": _catalog,
    "spark-server": _spark_server,
}


def _configure_logging(verbose: bool) -> None:
    """Diagnostics go to stderr, so stdout holds only results (``status --json`` is parsed by machines).

    Airflow is imported only if and when a command needs it (a spark-submit, a connection from the
    metadata database, an option only Airflow can read: see :mod:`snaprepl.common.airflow_config`), which
    spares a second of start-up; its log handler on stdout is moved then.
    """
    # Before Airflow is imported: its logging level decides whether Spark jobs' output shows.
    os.environ["AIRFLOW__LOGGING__LOGGING_LEVEL"] = "INFO" if verbose else "WARNING"
    # The Spark provider's own connection type (spark_connect) has a "_", which Airflow warns of at
    # each lookup, on stdout: not news here.
    quiet = "airflow.models.connection=error"
    given = os.environ.get("AIRFLOW__LOGGING__NAMESPACE_LEVELS", "")
    os.environ["AIRFLOW__LOGGING__NAMESPACE_LEVELS"] = f"{given},{quiet}" if given else quiet
    logging.basicConfig(level=logging.WARNING, format="snaprepl: %(levelname)s: %(message)s")
    _visible_logging()
    when_airflow_loads(_airflow_logging_to_stderr)


class _VisibleFormatter(logging.Formatter):
    """A handler's own formatting, with the control characters of each line made visible (log lines
    quote names and database errors)."""

    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        return "\n".join(visible(line) for line in self.inner.format(record).splitlines())


def _visible_logging() -> None:
    for handler in logging.getLogger().handlers:
        if not isinstance(handler.formatter, _VisibleFormatter):
            handler.setFormatter(_VisibleFormatter(handler.formatter))


def _error_line(text: str) -> None:
    """The command's one error line on stderr, with its control characters made visible."""
    print(f"snaprepl: error: {visible(text)}", file=sys.stderr)


def _airflow_logging_to_stderr() -> None:
    import airflow  # noqa: F401  (configures logging: a handler on stdout)

    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stdout:
            handler.setStream(sys.stderr)
    _visible_logging()
    # Airflow warns once about any short value in a connection's extra (e.g. a qualifier): not news here.
    logging.getLogger("airflow._shared.secrets_masker.secrets_masker").setLevel(logging.ERROR)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _configure_logging(bool(getattr(args, "verbose", False)))
    try:
        return COMMANDS[args.command](args) or 0  # argparse only accepts these commands
    except SnapreplError as err:
        _error_line(str(err))
        return 1
    except KeyboardInterrupt:
        _error_line("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (``snaprepl ddl ... | head``): stop quietly, as Unix tools do, and keep
        # Python from reporting the pipe again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as err:
        if os.environ.get("SNAPREPL_DEBUG"):
            raise
        text = str(err).strip().splitlines()[0] if str(err).strip() else ""
        _error_line(f"unexpected {type(err).__name__}: {text} (set SNAPREPL_DEBUG=1 for the traceback)")
        return 1


def run() -> NoReturn:
    """The ``snaprepl`` command as a process: :func:`main`, then exit with its code.

    A command lives for seconds and loads a large heap (SQLAlchemy; pyspark's Connect client with
    pandas and pyarrow): Python's cyclic collector, run every 700 allocations, would walk it hundreds
    of times, and again while the interpreter winds down (tenths of a second). Collections are rarer, and
    the heap is frozen before exit (``gc.freeze``: memory goes back to the system with the process).
    """
    gc.set_threshold(50_000, 20, 20)
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()

"""A sync step whose Spark read loses its connection names the end that went away (issue 27, item 4):
the subscriber's server, stopped while Spark reads its log in a pull, is named with its role, host,
port and database; the error stays retryable, and the subscription and the history store that one line.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg2
import pytest

from snaprepl import api
from snaprepl.database.sessions import forget_databases
from snaprepl.errors import ConnectionLost
from snaprepl.publications.request import SyncRequest
from tests.integration.bidir.conftest import SEED_ITEMS_DDL, Syncer
from tests.support.bidir import Servers
from tests.support.own_postgres import OwnPostgres, own_postgres

CONN = "own_sub"


@pytest.fixture
def own_sub(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[OwnPostgres, str]]:
    """A subscriber database on a PostgreSQL server of the test's own, as connection ``own_sub``."""
    with own_postgres() as server:
        database = f"sub_{uuid.uuid4().hex[:8]}"
        server.psql(f"CREATE DATABASE {database}")
        monkeypatch.setenv(f"AIRFLOW_CONN_{CONN.upper()}", server.url(database))
        forget_databases()
        yield server, database
        forget_databases()


def _when_spark_reads(server: OwnPostgres, database: str, then: Callable[[], None]) -> threading.Thread:
    """Run ``then`` once Spark's read of the subscriber (its generated subquery) waits on the lock."""
    query = (
        "SELECT count(*) FROM pg_stat_activity WHERE query ILIKE '%SPARK_GEN_SUBQ%' "
        "AND query NOT ILIKE '%pg_stat_activity%'"
    )

    def watch() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if server.psql(query, database).strip() not in {"", "0"}:
                then()
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_subscriber_that_dies_while_spark_reads_its_log_is_named(
    servers: Servers, own_sub: tuple[OwnPostgres, str], sql: Callable[[str], list[Any]], syncer: Syncer,
    catalog: Any, settings: Any,
) -> None:  # fmt: skip
    server, database = own_sub
    table = f"items_{uuid.uuid4().hex[:8]}"
    servers.pub.run(SEED_ITEMS_DDL.format(table=table))
    servers.pub.run(f"INSERT INTO {table} VALUES (1, 'a', 1.00), (2, 'b', 2.00)")
    name = api.repl_snp_server(CONN, catalog=catalog)
    item = f"public.{table}@bd_pub"
    sql(
        f"REPL_CREATE_SNAPSHOT_PUB('{table}@bd_pub', 2); REPL_CREATE_SNAPSHOT_SUB('{name}', '{item}', 2); "
        f"REPL_INIT_SNAPSHOT('{name}', '{item}', 2)"
    )
    server.psql(f"UPDATE {table} SET name = 'local' WHERE item_id = 1", database)
    # Spark's read of the log (joined with the table) waits on this lock until the server stops.
    locker = psycopg2.connect(server.url(database))
    locker.cursor().execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
    killer = _when_spark_reads(server, database, server.stop)

    with pytest.raises(ConnectionLost) as lost:
        syncer(SyncRequest.configured("pull", item, settings, server=name), catalog, settings)

    killer.join(timeout=5)
    locker.close()
    message = str(lost.value)
    assert message.startswith(f"lost the connection to the subscriber {name}, connection '{CONN}' (postgres at "), (
        message
    )
    assert f"127.0.0.1:{server.port}/{database}" in message and "run it again" in message, message
    assert lost.value.retryable
    stored = [catalog.subscription(name, item).ss_last_error, catalog.history(item)[0].rh_error]
    for text in stored:
        assert text.startswith(f"lost the connection to the subscriber {name}"), text
        assert "\n" not in text and "SPARK_GEN_SUBQ" not in text and "at org." not in text, text

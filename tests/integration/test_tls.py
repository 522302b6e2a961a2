"""Connections to a PostgreSQL that accepts TLS only (started by the test itself): the connection's
extras (sslmode=verify-full, sslrootcert) reach psycopg2, the Spark JDBC reads and writes and the
COPY writers, for a snapshot log, a refresh and a bi-directional sync; without TLS the user gets
one clear line, without the password."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.tls_postgres import CERT_USER, PASSWORD, TlsServer, tls_only_postgres

pytestmark = [pytest.mark.spark, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Tls:
    server: TlsServer
    src: str  # database names; connections tls_src and tls_dst (verify-full)
    dst: str


def snaprepl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snaprepl", *args], capture_output=True, text=True, cwd=REPO, timeout=600
    )


@pytest.fixture(scope="module")
def tls(catalog: object) -> Iterator[Tls]:
    tag = uuid.uuid4().hex[:8]
    with tls_only_postgres() as server:
        src, dst = f"tls_src_{tag}", f"tls_dst_{tag}"
        for name in (src, dst):
            server.psql("postgres", f"CREATE DATABASE {name}")
        verify = {"sslmode": "verify-full", "sslrootcert": str(server.ca_cert)}
        os.environ["AIRFLOW_CONN_TLS_SRC"] = server.conn_json(src, **verify)
        os.environ["AIRFLOW_CONN_TLS_DST"] = server.conn_json(dst, **verify)
        os.environ["AIRFLOW_CONN_TLS_PLAIN"] = server.conn_json(src, sslmode="disable")
        os.environ["AIRFLOW_CONN_TLS_OTHER_CA"] = server.conn_json(
            src, sslmode="verify-full", sslrootcert=str(server.other_ca_cert)
        )
        try:
            yield Tls(server, src, dst)
        finally:
            from snaprepl.database.sessions import forget_databases

            forget_databases()
            for conn_id in ("TLS_SRC", "TLS_DST", "TLS_PLAIN", "TLS_OTHER_CA", "TLS_CERT"):
                os.environ.pop(f"AIRFLOW_CONN_{conn_id}", None)


def test_verify_full_connects_over_tls_and_checks_the_servers_certificate(tls: Tls) -> None:
    from snaprepl.database.sessions import Database
    from snaprepl.errors import DatabaseUnreachable

    with Database.for_conn_id("tls_src").session() as session:
        assert session.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()") == [(True,)]
    with pytest.raises(DatabaseUnreachable) as failure, Database.for_conn_id("tls_other_ca").session():
        pass
    assert "certificate verify failed" in str(failure.value)
    assert "sslrootcert" in str(failure.value), "the hint names the extra to fix"


def test_a_client_certificate_logs_in_through_libpq_and_pgjdbc(tls: Tls, spark: Any) -> None:
    """pg_hba ``cert``: the PEM key serves libpq, its PKCS-8 DER twin ``client.key.pk8`` serves pgjdbc."""
    from snaprepl.connections.lookup import get_connection
    from snaprepl.database.sessions import Database
    from snaprepl.dialects import Column
    from snaprepl.spark.io import SparkJdbc

    tls.server.psql(tls.src, "CREATE TABLE certs (id int PRIMARY KEY); INSERT INTO certs VALUES (1), (2), (3)")
    tls.server.psql(tls.src, f"GRANT SELECT ON certs TO {CERT_USER}")
    files = {"sslcert": str(tls.server.directory / "client.crt"), "sslkey": str(tls.server.directory / "client.key")}
    os.environ["AIRFLOW_CONN_TLS_CERT"] = tls.server.conn_json(
        tls.src, login=CERT_USER, password=None, sslmode="verify-full", sslrootcert=str(tls.server.ca_cert), **files
    )
    conn = get_connection("tls_cert")
    with Database(conn).session() as session:
        assert session.query("SELECT current_user, count(*) FROM certs") == [(CERT_USER, 3)]
    assert conn.jdbc_properties()["sslkey"] == files["sslkey"] + ".pk8"
    rows = SparkJdbc(conn).read(spark, "SELECT id FROM certs", [Column("id", "integer")]).collect()
    assert sorted(row[0] for row in rows) == [1, 2, 3]


def test_a_connection_without_tls_gets_one_clear_line_without_the_password(tls: Tls) -> None:
    tls.server.psql(tls.src, "CREATE TABLE plain_t (id int PRIMARY KEY)")
    failed = snaprepl("sql", "CREATE SNAPSHOT LOG FOR plain_t@tls_plain")
    assert failed.returncode != 0
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("snaprepl: error: cannot connect to connection 'tls_plain'"), lines
    assert "no encryption" in lines[0] and "sslmode" in lines[0], lines[0]
    assert PASSWORD not in failed.stdout + failed.stderr
    assert tls.server.psql(tls.src, "SELECT count(*) FROM pg_tables WHERE tablename ILIKE 'rlog_plain_t'") == "0"


def test_log_snapshot_and_incremental_refresh_over_verify_full(tls: Tls) -> None:
    tls.server.psql(tls.src, "CREATE TABLE orders (id int PRIMARY KEY, v text)")
    tls.server.psql(tls.src, "INSERT INTO orders SELECT g, 'v' || g FROM generate_series(1, 20) g")
    created = snaprepl(
        "sql", "CREATE SNAPSHOT LOG FOR orders@tls_src; CREATE SNAPSHOT orders@tls_dst FROM orders@tls_src"
    )
    assert created.returncode == 0, created.stderr[-3000:]
    assert "created and filled: 20 rows" in created.stdout, created.stdout
    tls.server.psql(tls.src, "UPDATE orders SET v = 'changed' WHERE id = 1")
    tls.server.psql(tls.src, "DELETE FROM orders WHERE id = 2")
    tls.server.psql(tls.src, "INSERT INTO orders VALUES (21, 'new')")

    updated = snaprepl("sql", "UPDATE SNAPSHOT orders@tls_dst")

    assert updated.returncode == 0, updated.stderr[-3000:]
    assert "incremental refresh applied 2 upserts and 1 deletes" in updated.stdout, updated.stdout
    copy = tls.server.psql(tls.dst, "SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM orders")
    assert copy == tls.server.psql(tls.src, "SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM orders")
    assert "1:changed" in copy and "2:" not in copy.split(",")[1]
    for output in (created, updated):
        assert PASSWORD not in output.stdout + output.stderr
    log = (tls.server.directory / "server.log").read_text()
    # The copy and the refresh take the COPY pipe (psycopg2, not Spark: Spark over TLS is the client
    # certificate test's); each database saw snaprepl's own connections, every one over TLS.
    authorized = [line for line in log.splitlines() if "connection authorized" in line]
    for database in (tls.src, tls.dst):
        own = [line for line in authorized if f"database={database}" in line and "application_name=psql" not in line]
        assert own and all("SSL enabled" in line for line in own), authorized


def test_bidirectional_sync_over_verify_full(tls: Tls) -> None:
    tls.server.psql(tls.src, "CREATE TABLE items (item_id int PRIMARY KEY, name varchar(20))")
    tls.server.psql(tls.src, "INSERT INTO items SELECT g, 'n' || g FROM generate_series(1, 5) g")
    sub = "REPL_SERVER_NAME('tls_dst')"
    set_up = snaprepl(
        "sql",
        "REPL_SNP_SERVER('tls_src'); REPL_SNP_SERVER('tls_dst'); REPL_CREATE_SNAPSHOT_PUB('items@tls_src', 2); "
        f"REPL_CREATE_SNAPSHOT_SUB({sub}, 'items@tls_src', 2); REPL_INIT_SNAPSHOT({sub}, 'items@tls_src', 2)",
    )
    assert set_up.returncode == 0, set_up.stderr[-3000:]
    tls.server.psql(tls.dst, "UPDATE items SET name = 'from sub' WHERE item_id = 1")
    tls.server.psql(tls.src, "UPDATE items SET name = 'from pub' WHERE item_id = 2")

    synced = snaprepl("sql", "REPL_UPDATE_SNAPSHOT('items@tls_src', 2)")

    assert synced.returncode == 0, synced.stderr[-3000:]
    query = "SELECT string_agg(item_id || ':' || name, ',' ORDER BY item_id) FROM items"
    both = [tls.server.psql(db, query) for db in (tls.src, tls.dst)]
    assert both[0] == both[1] == "1:from sub,2:from pub,3:n3,4:n4,5:n5", both
    assert PASSWORD not in set_up.stderr + synced.stderr + set_up.stdout + synced.stdout


def test_the_api_server_offers_the_connection_types_and_tests_them_with_the_same_extras(tls: Tls, tmp_path) -> None:
    """What the UI's connection form and its Test button call, under a real api-server."""
    from tests.support.airflow_cluster import AirflowCluster

    enabled = {"AIRFLOW__CORE__TEST_CONNECTION": "Enabled"}
    with AirflowCluster(tmp_path / "airflow", env=enabled, components=("api-server",)) as cluster:
        types = {hook["connection_type"] for hook in cluster.api("GET", "/ui/connections/hook_meta")}
        assert {"postgres", "mysql", "sqlite", "jdbc"} <= types
        body = {"connection_id": "tls_button", "conn_type": "postgres", "host": "127.0.0.1", "port": tls.server.port}
        body |= {"login": "postgres", "password": PASSWORD, "schema": tls.src}
        verified = json.dumps({"sslmode": "verify-full", "sslrootcert": str(tls.server.ca_cert)})
        passed = cluster.api("POST", "/api/v2/connections/test", {**body, "extra": verified})
        assert passed == {"status": True, "message": "Connection successfully tested"}
        plain = cluster.api("POST", "/api/v2/connections/test", {**body, "extra": json.dumps({"sslmode": "disable"})})
        assert plain["status"] is False and "no encryption" in plain["message"]
        assert PASSWORD not in plain["message"]

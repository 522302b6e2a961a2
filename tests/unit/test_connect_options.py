"""What connection fields and extras become for each driver (snaprepl.dialects.connect): JDBC URLs
are built from validated, encoded parts, and driver options come only from the allow-list."""

from __future__ import annotations

from typing import Any

import pytest

from snaprepl.connections.lookup import ConnectionInfo
from snaprepl.errors import UnsupportedConnection


def conn(conn_type: str, **fields: Any) -> ConnectionInfo:
    values: dict[str, Any] = {"host": "db.example.com", "port": None, "login": "u", "password": "pw", "schema": "app"}
    return ConnectionInfo(conn_id="c", conn_type=conn_type, **{**values, **fields})


def test_postgres_tls_extras_reach_libpq_jdbc_and_copy(tmp_path) -> None:
    from snaprepl.dialects.postgres_copy import psycopg2_kwargs

    key = tmp_path / "client.pk8"
    key.write_bytes(b"\x30\x82binary")
    extra = {"sslmode": "verify-full", "sslrootcert": "/ca.pem", "sslcert": "/c.pem", "sslkey": str(key)}
    info = conn("postgres", extra={**extra, "charset": "LATIN1", "cursor": "dictcursor", "qualifier": "X"})
    url = info.sqlalchemy_url()
    assert dict(url.query) == {**extra, "client_encoding": "LATIN1"}
    props = info.jdbc_properties()
    assert {k: props[k] for k in ("ssl", "sslmode", "sslrootcert", "sslcert", "sslkey")} == {"ssl": "true", **extra}
    assert "cursor" not in props and "qualifier" not in props and "client_encoding" not in props
    assert info.jdbc_url() == "jdbc:postgresql://db.example.com:5432/app"
    kwargs = psycopg2_kwargs(info.dialect, info)
    assert kwargs["sslmode"] == "verify-full" and kwargs["sslrootcert"] == "/ca.pem" and kwargs["host"] == url.host


def test_pgjdbc_gets_a_der_key_and_a_pem_key_is_a_clear_error(tmp_path) -> None:
    pem = tmp_path / "client.key"
    pem.write_text("-----BEGIN PRIVATE KEY-----\nMII...\n")
    info = conn("postgres", extra={"sslmode": "require", "sslkey": str(pem)})
    assert info.sqlalchemy_url().query["sslkey"] == str(pem), "libpq reads PEM"
    with pytest.raises(UnsupportedConnection, match="openssl pkcs8 -topk8") as failure:
        info.jdbc_properties()
    assert f"-out {pem}.pk8" in str(failure.value), "the message says where the converted key goes"
    (tmp_path / "client.key.pk8").write_bytes(b"\x30\x82binary")
    assert info.jdbc_properties()["sslkey"] == f"{pem}.pk8"
    explicit = conn("postgres", extra={"sslmode": "require", "sslkey": str(pem), "jdbc_sslkey": "/k.pk8"})
    assert explicit.jdbc_properties()["sslkey"] == "/k.pk8"


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"sslmode": "verify_full"}, "verify-full"),
        ({"ssl_mode": "verify-full"}, "not a TLS setting snaprepl knows"),
        ({"SSLROOTCERT": "/ca.pem"}, "not a TLS setting snaprepl knows"),
        ({"charset": "utf8; options=-c"}, "invalid extra charset"),
    ],
)
def test_bad_or_misspelt_tls_extras_are_errors_not_silently_clear_text(extra: dict[str, str], needle: str) -> None:
    with pytest.raises(UnsupportedConnection, match=needle):
        conn("postgres", extra=extra).sqlalchemy_url()


def test_mariadb_ssl_extras_in_the_mysql_providers_form() -> None:
    info = conn("mysql", extra={"ssl": {"ca": "/ca.pem"}, "charset": "utf8mb4"})
    assert dict(info.sqlalchemy_url().query) == {
        "charset": "utf8mb4",
        "ssl_ca": "/ca.pem",
        "ssl_check_hostname": "true",
    }
    props = info.jdbc_properties()
    assert props["useSsl"] == "true" and props["serverSslCert"] == "/ca.pem"
    assert "disableSslHostnameVerification" not in props
    ca_only = conn("mysql", extra={"ssl": '{"ca": "/ca.pem"}', "ssl_mode": "VERIFY_CA"}).jdbc_properties()
    assert ca_only["disableSslHostnameVerification"] == "true"
    required = conn("mysql", extra={"ssl_mode": "REQUIRED"})
    assert required.jdbc_properties()["trustServerCertificate"] == "true"
    assert required.sqlalchemy_url().query["ssl_check_hostname"] == "false"
    with pytest.raises(UnsupportedConnection, match="no CA certificate"):
        conn("mysql", extra={"ssl_mode": "VERIFY_IDENTITY"}).sqlalchemy_url()
    with pytest.raises(UnsupportedConnection, match="key store"):
        conn("mysql", extra={"ssl": {"ca": "/ca", "cert": "/c", "key": "/k"}}).jdbc_properties()
    assert conn("mysql").sqlalchemy_url().query == {"charset": "utf8mb4"}, "no TLS options unless asked for"


def test_unknown_extras_are_not_passed_to_drivers() -> None:
    info = conn("postgres", extra={"options": "-c search_path=evil", "keepalives": 1, "cursor": "dictcursor"})
    props, query = info.jdbc_properties(), info.sqlalchemy_url().query
    for key in ("options", "keepalives", "cursor"):
        assert key not in query
    assert "keepalives" not in props and "cursor" not in props
    assert "search_path" not in props["options"], "pgjdbc's options carry only snaprepl's own settings"


ISSUE_EXAMPLE = "rel_x?options=-csearch_path%3Devil&x="


@pytest.mark.parametrize("conn_type", ["postgres", "mysql"])
def test_a_database_field_with_url_syntax_is_refused_not_interpolated(conn_type: str) -> None:
    info = conn(conn_type, schema=ISSUE_EXAMPLE)
    for build in (info.jdbc_url, info.sqlalchemy_url):
        with pytest.raises(UnsupportedConnection, match="contains URL syntax"):
            build()


@pytest.mark.parametrize("host", ["db?ssl=false", "db&x=1", "db/evil", "db:5432", "db#x", "a b", "db..x", ""])
def test_a_host_field_with_url_syntax_is_refused(host: str) -> None:
    info = conn("postgres", host=host)
    if not host:
        assert info.jdbc_url() == "jdbc:postgresql://127.0.0.1:5432/app", "no host: the local server"
        return
    with pytest.raises(UnsupportedConnection, match="not a host name or IP address"):
        info.jdbc_url()


def test_jdbc_urls_are_encoded_and_carry_no_parameters() -> None:
    assert conn("postgres", host="::1", schema="dätä").jdbc_url() == "jdbc:postgresql://[::1]:5432/d%C3%A4t%C3%A4"
    assert conn("mysql", host="10.0.0.7", port=3307).jdbc_url() == "jdbc:mysql://10.0.0.7:3307/app"
    assert conn("postgres", host="db-1.example.com", port=6543).jdbc_url() == (
        "jdbc:postgresql://db-1.example.com:6543/app"
    )
    props = conn("mysql").jdbc_properties()
    assert props["sessionVariables"].startswith("time_zone='+00:00',") and props["rewriteBatchedStatements"] == "true"
    with pytest.raises(UnsupportedConnection, match="not a TCP port"):
        conn("postgres", port=70000).jdbc_url()

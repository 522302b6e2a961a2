"""What a connection's fields and extras become for each driver: validated, encoded, allow-listed.

A connection's host and database become part of a JDBC URL, so they may carry no URL syntax
(``?``, ``&``, ``#``, ``/``, ...): ``rel_x?options=-csearch_path%3Devil&x=`` as a database would
otherwise hand the driver parameters of the user's choosing. Driver parameters come only from
:data:`PG_EXTRAS` and :data:`MYSQL_EXTRAS` and go into JDBC *properties*, never into the URL.

Extras snaprepl does not know are ignored (a connection may be shared with other Airflow tasks
that use them), except those that look like TLS settings: a misspelt ``ssl_mode`` silently ignored
would mean clear text where TLS was wanted, so that is an error.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from snaprepl.errors import UnsupportedConnection

#: Extras snaprepl itself reads (see docs/concepts/connections.md).
OWN_EXTRAS = frozenset({"qualifier", "replication_name", "driver_class", "sqlalchemy_url"})
#: PostgreSQL extras passed on to psycopg2 (libpq) and pgjdbc.
PG_EXTRAS = frozenset(
    {"sslmode", "sslrootcert", "sslcert", "sslkey", "jdbc_sslkey", "charset", "connect_timeout", "application_name"}
)
#: MariaDB/MySQL extras, in the MySQL provider's form: ``ssl`` {"ca", "cert", "key"}, ``ssl_mode``.
MYSQL_EXTRAS = frozenset({"ssl", "ssl_mode", "charset"})
PG_SSLMODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
MYSQL_SSL_MODES = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")

_HOSTNAME = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_.-]{0,252}[A-Za-z0-9_])?$")
# Characters with a meaning in a URL (or a JDBC URL's property list): never in a database name.
_URL_SYNTAX = re.compile(r"[?&#/\\;=%@:\s\x00-\x1f\x7f'\"]")
_CHARSET = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_APP_NAME = re.compile(r"^[A-Za-z0-9 _.:-]{1,63}$")


@dataclass(frozen=True)
class DriverOptions:
    """Options of one connection for each driver.

    :param query: SQLAlchemy URL query (psycopg2/libpq DSN parameters, PyMySQL's ``ssl_*``).
    :param jdbc: JDBC driver properties.
    :param psycopg2: keyword arguments of ``psycopg2.connect`` beyond host, port, database and login.
    :param jdbc_unsupported: why the JDBC driver cannot honour these options (an error when Spark connects).
    """

    query: dict[str, str] = field(default_factory=dict)
    jdbc: dict[str, str] = field(default_factory=dict)
    psycopg2: dict[str, str] = field(default_factory=dict)
    jdbc_unsupported: str = ""
    #: pgjdbc's client key (checked only when a JDBC connection is made: libpq wants PEM, pgjdbc DER).
    jdbc_key: str = ""

    def jdbc_properties(self, conn_id: str) -> dict[str, str]:
        if self.jdbc_unsupported:
            raise UnsupportedConnection(
                f"connection '{conn_id}': {self.jdbc_unsupported}",
                "use a password over TLS (ssl with only ca) for connections that Spark reads or writes",
            )
        return {**self.jdbc, "sslkey": _jdbc_key(conn_id, self.jdbc_key)} if self.jdbc_key else dict(self.jdbc)


def checked_host(conn_id: str, host: str | None, default: str = "127.0.0.1") -> str:
    """The connection's host, if it is a host name or IP address and nothing else."""
    if not host:
        return default
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        if _HOSTNAME.match(host) and ".." not in host:
            return host
        raise UnsupportedConnection(
            f"connection '{conn_id}' has host {host!r}, which is not a host name or IP address",
            "put only the server's name or address in host; TLS and driver options go in the extra",
        ) from None
    return f"[{address}]" if address.version == 6 else str(address)


def checked_database(conn_id: str, schema: str | None) -> str:
    """The connection's database (its schema field), URL-encoded; URL syntax in it is an error."""
    if not schema:
        return ""
    if _URL_SYNTAX.search(schema):
        raise UnsupportedConnection(
            f"connection '{conn_id}' has database {schema!r}, which contains URL syntax "
            "(one of ? & # / \\ ; = % @ : quotes or spaces)",
            "put only the database's name in the connection's schema field; driver options go in the extra",
        )
    return quote(schema, safe="")


def checked_port(conn_id: str, port: int | None, default: int) -> int:
    value = default if port is None else port
    if not 0 < int(value) < 65536:
        raise UnsupportedConnection(f"connection '{conn_id}' has port {value}, which is not a TCP port")
    return int(value)


def _allowed(conn_id: str, extra: Mapping[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
    """The extras passed on to drivers; an unknown extra that looks like a TLS setting is an error."""
    passed: dict[str, Any] = {}
    for key, value in extra.items():
        if key in allowed:
            if value not in (None, ""):
                passed[key] = value
        elif key not in OWN_EXTRAS and re.search(r"ssl|tls", key, re.IGNORECASE):
            raise UnsupportedConnection(
                f"connection '{conn_id}' has extra {key!r}, which is not a TLS setting snaprepl knows",
                f"use {', '.join(sorted(k for k in allowed if re.search('ssl', k)))}",
            )
    return passed


def _text(conn_id: str, key: str, value: Any, pattern: re.Pattern[str] | None = None) -> str:
    text = str(value)
    if "\x00" in text or (pattern is not None and not pattern.match(text)):
        raise UnsupportedConnection(f"connection '{conn_id}' has an invalid extra {key}: {text!r}")
    return text


def postgres_options(conn_id: str, extra: Mapping[str, Any]) -> DriverOptions:
    """libpq and pgjdbc options from a PostgreSQL connection's extras."""
    given = _allowed(conn_id, extra, PG_EXTRAS)
    libpq: dict[str, str] = {}
    jdbc: dict[str, str] = {}
    mode = str(given.get("sslmode", "")).lower()
    if mode:
        if mode not in PG_SSLMODES:
            raise UnsupportedConnection(
                f"connection '{conn_id}' has sslmode {given['sslmode']!r}", f"use one of {', '.join(PG_SSLMODES)}"
            )
        libpq["sslmode"] = jdbc["sslmode"] = mode
        if mode not in {"disable", "allow", "prefer"}:
            jdbc["ssl"] = "true"
    for key in ("sslrootcert", "sslcert", "sslkey"):
        if key in given:
            libpq[key] = jdbc[key] = _text(conn_id, key, given[key])
    jdbc.pop("sslkey", None)
    jdbc_key = _text(conn_id, "jdbc_sslkey", given.get("jdbc_sslkey") or given.get("sslkey") or "")
    if "charset" in given:
        libpq["client_encoding"] = _text(conn_id, "charset", given["charset"], _CHARSET)
    if "connect_timeout" in given:
        seconds = _text(conn_id, "connect_timeout", given["connect_timeout"], re.compile(r"^\d{1,5}$"))
        libpq["connect_timeout"] = jdbc["connectTimeout"] = seconds
    if "application_name" in given:
        libpq["application_name"] = jdbc["ApplicationName"] = _text(
            conn_id, "application_name", given["application_name"], _APP_NAME
        )
    return DriverOptions(query=dict(libpq), jdbc=jdbc, psycopg2=dict(libpq), jdbc_key=jdbc_key)


def _jdbc_key(conn_id: str, path: str) -> str:
    """pgjdbc reads client keys as PKCS-8 DER (or PKCS-12 ``.p12``/``.pfx``), not libpq's PEM: for a
    PEM ``sslkey`` it gets ``<sslkey>.pk8`` (or the ``jdbc_sslkey`` extra)."""
    if not _is_pem(path):
        return path  # DER, or on another machine (a Spark cluster): the driver says if it cannot read it
    der = f"{path}.pk8"
    if Path(der).is_file() and not _is_pem(der):
        return der
    raise UnsupportedConnection(
        f"connection '{conn_id}': the JDBC driver cannot read the PEM key {path}",
        f"convert it next to it with `openssl pkcs8 -topk8 -inform PEM -outform DER -nocrypt -in {path} -out {der}`",
    )


def _is_pem(path: str) -> bool:
    try:
        with Path(path).open("rb") as handle:
            return handle.read(11) == b"-----BEGIN "
    except OSError:
        return False


def mysql_options(conn_id: str, extra: Mapping[str, Any]) -> DriverOptions:
    """PyMySQL and MariaDB Connector/J options from a MariaDB/MySQL connection's extras."""
    given = _allowed(conn_id, extra, MYSQL_EXTRAS)
    ssl = given.get("ssl") or {}
    if isinstance(ssl, str):
        try:
            ssl = json.loads(ssl)
        except json.JSONDecodeError:
            ssl = None
    if not isinstance(ssl, dict) or set(ssl) - {"ca", "cert", "key"}:
        raise UnsupportedConnection(
            f"connection '{conn_id}' has an extra ssl that is not an object with ca, cert and key",
            'e.g. "ssl": {"ca": "/etc/ssl/db-ca.pem"}',
        )
    files = {k: _text(conn_id, f"ssl.{k}", v) for k, v in ssl.items() if v}
    mode = str(given.get("ssl_mode") or ("VERIFY_IDENTITY" if files.get("ca") else "")).upper()
    if mode and mode not in MYSQL_SSL_MODES:
        raise UnsupportedConnection(
            f"connection '{conn_id}' has ssl_mode {given['ssl_mode']!r}", f"use one of {', '.join(MYSQL_SSL_MODES)}"
        )
    if mode in {"VERIFY_CA", "VERIFY_IDENTITY"} and not files.get("ca"):
        raise UnsupportedConnection(
            f"connection '{conn_id}' has ssl_mode {mode} but no CA certificate", 'add "ssl": {"ca": "/path/ca.pem"}'
        )
    query = {"charset": _text(conn_id, "charset", given.get("charset", "utf8mb4"), _CHARSET)}
    jdbc: dict[str, str] = {}
    if mode in {"REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"}:
        query.update({f"ssl_{k}": v for k, v in files.items()})
        query["ssl_check_hostname"] = "true" if mode == "VERIFY_IDENTITY" else "false"
        jdbc["useSsl"] = "true"
        if files.get("ca"):
            jdbc["serverSslCert"] = files["ca"]
        else:
            jdbc["trustServerCertificate"] = "true"
        if mode == "VERIFY_CA":
            jdbc["disableSslHostnameVerification"] = "true"
    unsupported = (
        "MariaDB Connector/J takes client certificates only from a Java key store, which snaprepl does not pass"
        if files.get("key") and mode
        else ""
    )
    return DriverOptions(query=query, jdbc=jdbc, jdbc_unsupported=unsupported)


def tls_hint(reason: str) -> str:
    """What to do about a failed connection, knowing the usual TLS failures by their messages."""
    lowered = reason.lower()
    if "no encryption" in lowered or "ssl off" in lowered or "requires ssl" in lowered or "secure transport" in lowered:
        return (
            "the server accepts only TLS connections: set the connection's extra sslmode (verify-full) and "
            'sslrootcert (PostgreSQL) or ssl {"ca": ...} (MariaDB)'
        )
    if "certificate verify failed" in lowered or ("certificate" in lowered and "verif" in lowered):
        return "the server's certificate was not signed by the CA in the connection's sslrootcert (or ssl.ca)"
    if "does not match" in lowered and ("host" in lowered or "certificate" in lowered):
        return "the server's certificate is for another host name: connect by a name or address it lists"
    return "check that the server runs and the connection's host, port, login and schema"

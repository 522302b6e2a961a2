"""Airflow connection values (``AIRFLOW_CONN_<ID>``: a URI or JSON) parsed as Airflow parses them,
without importing Airflow (:func:`snaprepl.connections.lookup.get_connection` uses it outside Airflow's
processes). ``tests/unit/test_connection_uris.py`` checks it against Airflow's own ``Connection``.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

#: The query parameter of a URI that holds the whole extra as JSON (Airflow's ``Connection.EXTRA_KEY``).
EXTRA_KEY = "__extra__"
_JSON_FIELDS = {"conn_type", "host", "login", "password", "schema", "port", "extra", "description"}


def parse_connection_value(value: str) -> dict[str, Any] | None:
    """The fields of a connection (conn_type, host, port, login, password, schema, extra_dejson), or
    None for a value this plain parser does not take (Airflow then parses it, and says what is wrong)."""
    try:
        fields = _from_json(value) if value.lstrip().startswith("{") else _from_uri(value)
    except ValueError:
        return None
    if fields is None:
        return None
    extra = fields.pop("extra", None)
    try:
        fields["extra_dejson"] = json.loads(extra) if extra else {}
    except ValueError:
        return None
    return fields if isinstance(fields["extra_dejson"], dict) else None


def _normalize_conn_type(conn_type: str) -> str:
    if conn_type == "postgresql":
        return "postgres"
    return conn_type.replace("-", "_")


def _from_json(value: str) -> dict[str, Any] | None:
    data = json.loads(value)
    if not isinstance(data, dict) or set(data) - _JSON_FIELDS:
        return None
    extra = data.get("extra")
    return {
        "conn_type": _normalize_conn_type(data["conn_type"]) if data.get("conn_type") else data.get("conn_type"),
        "host": data.get("host"),
        "port": int(data["port"]) if data.get("port") else None,
        "login": data.get("login"),
        "password": data.get("password"),
        "schema": data.get("schema"),
        "extra": extra if isinstance(extra, str) or not extra else json.dumps(extra),
    }


def _from_uri(uri: str) -> dict[str, Any] | None:
    schemes = uri.count("://")
    if schemes > 2:
        return None
    with_protocol = schemes == 2
    conn_type = urlsplit(uri).scheme
    rest = uri.replace(f"{conn_type}://", "" if with_protocol else "//")
    if with_protocol and ("@" in rest.split("://", 1)[0] or ":" in rest.split("://", 1)[0]):
        return None
    parts = urlsplit(rest)
    host = _hostname(parts)
    protocol = parts.scheme if with_protocol else None
    schema = parts.path[1:]
    extra = None
    if parts.query:
        query: dict[str, Any] = dict(parse_qsl(parts.query, keep_blank_values=True))
        if EXTRA_KEY in query:
            extra = query[EXTRA_KEY]
        else:
            for key, item in query.items():
                with contextlib.suppress(ValueError):
                    query[key] = json.loads(item) if item else item
            extra = json.dumps(query)
    return {
        "conn_type": _normalize_conn_type(conn_type),
        "host": f"{protocol}://{host}" if host and protocol else host,
        "port": parts.port,
        "login": unquote(parts.username) if parts.username else parts.username,
        "password": unquote(parts.password) if parts.password else parts.password,
        "schema": unquote(schema) if schema else schema,
        "extra": extra,
    }


def _hostname(parts: Any) -> str:
    """The host as Airflow reads it (``urlsplit`` lower-cases it, and mangles paths in it)."""
    hostname = unquote(parts.hostname or "")
    if "/" in hostname:
        hostname = parts.netloc
        if "@" in hostname:
            hostname = hostname.rsplit("@", 1)[1]
        if ":" in hostname:
            hostname = hostname.split(":", 1)[0]
        hostname = unquote(hostname)
    return hostname

"""docker-compose.yaml's variables and secrets: every password and secret comes from a documented
variable (docker/.env.example lists each with the file's own default), lands where it should when set,
and the catalog and source connections the services get are the databases the file defines.

The resolved configuration is read twice (conftest.py): with no variable set, and with a
distinct value for every secret (to see where each one lands).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.support.compose import (
    SECRET_VARIABLES,
    SUBSTITUTION_ONLY,
    compose_variables,
    environment,
    service,
    url_password,
)


@pytest.mark.parametrize("resolution", ["defaults", "customised"])
def test_catalog_connection_is_the_metadata_database(
    resolution: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What snaprepl makes of AIRFLOW_CONN_SNAPREPL_CATALOG is the database Airflow migrates, reached by
    tasks as the catalog role that airflow-init grants, and by airflow-init as the database's owner."""
    from sqlalchemy.engine import make_url

    from snaprepl.catalog.location import catalog_connection
    from snaprepl.settings import Settings

    env = environment(request.getfixturevalue(resolution), "airflow-scheduler")
    monkeypatch.setenv("AIRFLOW_CONN_SNAPREPL_CATALOG", env["AIRFLOW_CONN_SNAPREPL_CATALOG"])
    catalog = catalog_connection(Settings()).sqlalchemy_url()
    metadata = make_url(env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
    assert catalog.get_backend_name() == metadata.get_backend_name() == "postgresql"
    assert (catalog.host, catalog.port or 5432, catalog.database) == (
        metadata.host,
        metadata.port or 5432,
        metadata.database,
    )
    assert catalog.username == "snaprepl_catalog" != metadata.username, "tasks do not hold the owner's credentials"
    init = service(request.getfixturevalue(resolution), "airflow-init")
    init_env = environment(request.getfixturevalue(resolution), "airflow-init")
    assert catalog.password == init_env["SNAPREPL_CATALOG_PASSWORD"]
    assert "snaprepl catalog grant snaprepl_catalog --password-env SNAPREPL_CATALOG_PASSWORD" in " ".join(
        init["command"]
    )
    owner = make_url(init_env["AIRFLOW_CONN_SNAPREPL_CATALOG"].replace("postgresql://", "postgresql+psycopg2://"))
    assert (owner.username, owner.password, owner.database) == (metadata.username, metadata.password, metadata.database)
    postgres = environment(request.getfixturevalue(resolution), "postgres")
    assert (metadata.host, metadata.username, metadata.password, metadata.database) == (
        "postgres",
        postgres["POSTGRES_USER"],
        postgres["POSTGRES_PASSWORD"],
        postgres["POSTGRES_DB"],
    )


def test_source_connections_match_the_sample_databases(defaults: dict[str, Any], customised: dict[str, Any]) -> None:
    from airflow.models.connection import Connection

    from snaprepl.connections.lookup import ConnectionInfo

    cases = {
        "AIRFLOW_CONN_SHOP_PG": (
            "source-postgres",
            "postgres",
            5432,
            "POSTGRES_USER",
            "POSTGRES_PASSWORD",
            "POSTGRES_DB",
        ),
        "AIRFLOW_CONN_SHOP_MY": (
            "source-mariadb",
            "mysql",
            3306,
            "MARIADB_USER",
            "MARIADB_PASSWORD",
            "MARIADB_DATABASE",
        ),
    }
    for config in (defaults, customised):
        env = environment(config, "airflow-scheduler")
        for variable, (host, dialect, port, user_key, password_key, database_key) in cases.items():
            conn_id = variable.removeprefix("AIRFLOW_CONN_").lower()
            info = ConnectionInfo.from_airflow(Connection(conn_id=conn_id, uri=env[variable]))
            database = environment(config, host)
            assert info.dialect.name == dialect
            assert (info.host, info.port, info.schema, info.login, info.password) == (
                host,
                port,
                database[database_key],
                database[user_key],
                database[password_key],
            ), variable


def test_variables_are_documented_with_the_same_defaults(raw_text: str, documented: dict[str, str]) -> None:
    """Every ${VARIABLE} has a development default, and docker/.env.example lists each with that value
    (so copying it to .env changes nothing until edited)."""
    variables = compose_variables(raw_text)
    assert set(variables) >= SECRET_VARIABLES
    for name, uses in variables.items():
        assert name in documented, f"${{{name}}} is not documented in docker/.env.example"
        for op, default in uses:
            assert op == ":-", f"${{{name}}} needs a development default (${{{name}:-...}})"
            assert default == documented[name], f"${{{name}}}: default {default!r} != .env.example {documented[name]!r}"
    assert not set(documented) - set(variables), "docker/.env.example documents variables the compose file ignores"


def test_passwords_and_secrets_only_come_from_variables(raw: dict[str, Any]) -> None:
    """In the file as written, every password (in URIs or *_PASSWORD keys) and every secret is one
    ``${VARIABLE:-dev default}`` substitution of a known variable, never a literal."""
    checked = set()
    for name, definition in raw["services"].items():
        for key, written in (definition.get("environment") or {}).items():
            value = "" if written is None else str(written)
            candidates = []
            if re.search(r"PASSWORD|SECRET|FERNET", key) and not key.endswith("RANDOM_ROOT_PASSWORD"):
                candidates.append(value)
            if (password := url_password(value)) is not None:
                candidates.append(password)
            if value.lstrip().startswith("{"):
                assert "password" not in json.loads(value), f"{name}.{key}: JSON connection with a password"
            for candidate in candidates:
                match = SUBSTITUTION_ONLY.match(candidate)
                assert match and match["name"] in SECRET_VARIABLES, f"{name}.{key}: literal secret {candidate!r}"
                checked.add(match["name"])
    assert checked == SECRET_VARIABLES


def test_resolved_passwords_follow_their_variables(customised: dict[str, Any], custom_secrets: dict[str, str]) -> None:
    """With every secret set, each service sees exactly those values: no dev default is left behind."""
    seen = set()
    for name in customised["services"]:
        for key, value in environment(customised, name).items():
            password = url_password(value)
            if password is not None:
                assert password in custom_secrets.values(), f"{name}.{key}: password {password!r} is not a variable's"
                seen.add(password)
            if re.search(r"PASSWORD|SECRET|FERNET", key) and not key.endswith("RANDOM_ROOT_PASSWORD"):
                assert value in custom_secrets.values(), f"{name}.{key} = {value!r} is not a variable's"
                seen.add(value)
    assert seen == set(custom_secrets.values())
    airflow = environment(customised, "airflow-apiserver")
    assert airflow["AIRFLOW__API_AUTH__JWT_SECRET"] == custom_secrets["AIRFLOW_JWT_SECRET"]
    assert url_password(airflow["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]) == custom_secrets["AIRFLOW_DB_PASSWORD"]
    assert environment(customised, "postgres")["POSTGRES_PASSWORD"] == custom_secrets["AIRFLOW_DB_PASSWORD"]

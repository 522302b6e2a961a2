"""How snaprepl connects, as a user meets it on the command line: connection fields that try to
smuggle driver parameters into a JDBC URL are refused in one line, and nothing is created."""

from __future__ import annotations

import json

from tests.integration.test_cli import assert_one_line_error, snaprepl
from tests.support.databases import PG_ADMIN, RealDatabase

#: Issue 14.7: a database field that passed extra driver parameters through the JDBC URL.
SMUGGLED = "rel_x?options=-csearch_path%3Devil&x="


def test_a_database_field_with_url_parameters_is_refused_in_one_line(pg_db: RealDatabase, catalog, unique_name) -> None:
    pg_db.run(f"CREATE TABLE {unique_name} (id int PRIMARY KEY)")
    evil = {"conn_type": "postgres", "host": PG_ADMIN["host"], "port": PG_ADMIN["port"], "login": "postgres"}
    env = {"AIRFLOW_CONN_SMUGGLER": json.dumps({**evil, "schema": SMUGGLED})}

    query = f"SELECT id FROM {unique_name}@smuggler"
    result = snaprepl("sql", f"CREATE NONINCREMENTAL SNAPSHOT {unique_name}_copy@{pg_db.conn_id} AS '{query}'", env=env)

    assert_one_line_error(result, "connection 'smuggler' has database", "contains URL syntax")
    assert not pg_db.table_exists(f"{unique_name}_copy")

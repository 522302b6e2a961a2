"""A complete refresh keeps what the destination's owner defined (issue 27.2).

The swap (drop and rename) is kept for speed where the staging table can carry the definition over
(CHECK constraints, defaults, comments, storage parameters, row-level security on PostgreSQL; CHECK,
defaults and comments on MariaDB); where it cannot (publication membership, column grants)
the destination keeps its identity and gets the difference by key. Both survive CREATE SNAPSHOT into
an existing empty table and every complete refresh, and still work."""

from __future__ import annotations

import pytest

from snaprepl import api
from tests.support.databases import RealDatabase

pytestmark = pytest.mark.spark


def _oid(db: RealDatabase, table: str) -> int:
    return int(db.rows(f"SELECT '{table}'::regclass::oid")[0][0])


def _pg_definition(db: RealDatabase, table: str) -> dict[str, object]:
    one = lambda sql: db.rows(sql)[0][0]  # noqa: E731
    return {
        "check": one(
            f"SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = '{table}'::regclass "
            "AND contype = 'c'"
        ),
        "default": one(f"SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = '{table}'::regclass"),
        "table comment": one(f"SELECT obj_description('{table}'::regclass, 'pg_class')"),
        "column comment": one(f"SELECT col_description('{table}'::regclass, 2)"),
        "reloptions": one(f"SELECT reloptions FROM pg_class WHERE oid = '{table}'::regclass"),
        "rls": one(f"SELECT (relrowsecurity, relforcerowsecurity)::text FROM pg_class WHERE oid = '{table}'::regclass"),
    }


def test_postgres_swap_carries_the_definition_and_other_tables_keep_theirs(
    pg_db, catalog, settings, refresher, unique_name
) -> None:
    src, swapped, kept, granted = f"{unique_name}_s", f"{unique_name}_w", f"{unique_name}_k", f"{unique_name}_g"
    role, publication = f"{unique_name}_reader", f"{unique_name}_pub"
    definition = "(id int PRIMARY KEY, n int CONSTRAINT n_not_negative CHECK (n >= 0), note text DEFAULT 'none')"
    pg_db.run(
        f"CREATE TABLE {src} (id int PRIMARY KEY, n int, note text)",
        f"INSERT INTO {src} VALUES (1, 1, 'a'), (2, 2, 'b')",
        f"CREATE TABLE {swapped} {definition} WITH (fillfactor = 70)",
        f"COMMENT ON TABLE {swapped} IS 'owner''s table: 100%'",
        f"COMMENT ON COLUMN {swapped}.n IS 'never negative'",
        f"ALTER TABLE {swapped} ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY",
        f"CREATE TABLE {kept} {definition}",
        f"CREATE PUBLICATION {publication} FOR TABLE {kept}",
        f"CREATE TABLE {granted} {definition}",
        f"CREATE ROLE {role}",
        f"GRANT SELECT (id, n) ON {granted} TO {role}",
    )
    expected = {table: _pg_definition(pg_db, table) for table in (swapped, kept, granted)}
    assert expected[swapped]["reloptions"] == ["fillfactor=70"] and expected[swapped]["rls"] == "(t,t)"
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    try:
        oids = {table: _oid(pg_db, table) for table in (swapped, kept, granted)}
        for table in (swapped, kept, granted):
            api.repl_create_snapshot(f"SELECT id, n, note FROM {src}@{pg_db.conn_id}", f"{table}@{pg_db.conn_id}", **kw)
        pg_db.run(f"INSERT INTO {src} VALUES (3, 3, 'c')", f"UPDATE {src} SET n = 20 WHERE id = 1")
        for table in (swapped, kept, granted):
            api.repl_refresh_noninc_snapshot(f"{table}@{pg_db.conn_id}", **kw)
            assert pg_db.rows(f"SELECT id, n, note FROM {table} ORDER BY id") == [
                (1, 20, "a"),
                (2, 2, "b"),
                (3, 3, "c"),
            ]
            assert _pg_definition(pg_db, table) == expected[table]
            with pytest.raises(Exception, match="n_not_negative"):
                pg_db.run(f"INSERT INTO {table} (id, n) VALUES (9, -1)")
            pg_db.run(f"INSERT INTO {table} (id, n) VALUES (8, 8)")
            assert pg_db.rows(f"SELECT note FROM {table} WHERE id = 8") == [("none",)], "the default still applies"
            pg_db.run(f"DELETE FROM {table} WHERE id = 8")
        assert _oid(pg_db, swapped) != oids[swapped], "a plain table is still swapped (the fast path)"
        assert _oid(pg_db, kept) == oids[kept], "a published table is never replaced"
        assert _oid(pg_db, granted) == oids[granted], "a table with column grants is never replaced"
        assert pg_db.rows(f"SELECT tablename FROM pg_publication_tables WHERE pubname = '{publication}'") == [(kept,)]
        assert pg_db.rows(
            f"SELECT has_column_privilege('{role}', '{granted}', 'n', 'SELECT'), "
            f"has_column_privilege('{role}', '{granted}', 'note', 'SELECT')"
        ) == [(True, False)]
    finally:
        pg_db.run(f"DROP PUBLICATION IF EXISTS {publication}", f"DROP OWNED BY {role}", f"DROP ROLE {role}")


def test_mariadb_swap_keeps_checks_defaults_and_comments(mysql_db, catalog, settings, refresher, unique_name) -> None:
    src, dest = f"{unique_name}_s", f"{unique_name}_d"
    mysql_db.run(
        f"CREATE TABLE {src} (id int PRIMARY KEY, n int, note varchar(20))",
        f"INSERT INTO {src} VALUES (1, 1, 'a'), (2, 2, 'b')",
        f"CREATE TABLE {dest} (id int PRIMARY KEY, n int COMMENT 'never negative', note varchar(20) DEFAULT 'none', "
        f"CONSTRAINT n_not_negative CHECK (n >= 0)) COMMENT 'owner''s table'",
    )

    def definition() -> list[tuple[object, ...]]:
        return mysql_db.rows(
            "SELECT c.COLUMN_NAME, c.COLUMN_DEFAULT, c.COLUMN_COMMENT, t.TABLE_COMMENT, "
            "(SELECT GROUP_CONCAT(CHECK_CLAUSE) FROM information_schema.CHECK_CONSTRAINTS k "
            "  WHERE k.CONSTRAINT_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME) "
            "FROM information_schema.COLUMNS c JOIN information_schema.TABLES t "
            "ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME "
            f"WHERE c.TABLE_SCHEMA = DATABASE() AND c.TABLE_NAME = '{dest}' ORDER BY c.ORDINAL_POSITION"
        )

    expected = definition()
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot(f"SELECT id, n, note FROM {src}@{mysql_db.conn_id}", f"{dest}@{mysql_db.conn_id}", **kw)
    assert definition() == expected
    mysql_db.run(f"INSERT INTO {src} VALUES (3, 3, 'c')")
    api.repl_refresh_noninc_snapshot(f"{dest}@{mysql_db.conn_id}", **kw)
    assert mysql_db.rows(f"SELECT id, n, note FROM {dest} ORDER BY id") == [(1, 1, "a"), (2, 2, "b"), (3, 3, "c")]
    assert definition() == expected
    with pytest.raises(Exception, match="n_not_negative"):
        mysql_db.run(f"INSERT INTO {dest} (id, n) VALUES (9, -1)")
    mysql_db.run(f"INSERT INTO {dest} (id, n) VALUES (8, 8)")
    assert mysql_db.rows(f"SELECT note FROM {dest} WHERE id = 8") == [("none",)]

"""Migration 0018 (issue 24): the replay log keyed (TARGET, SNAPTIME, RLOG_ROWGUID), on the three
databases a catalog can live in. Entries recorded before the migration are all there after it, a
refresh's entries are still refused twice and skipped once known, and the way back restores the old
key."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.catalog.location import connection_from_url
from snaprepl.catalog.migrate import upgrade
from snaprepl.catalog.store import Catalog
from tests.support.databases import PG_ADMIN, mysql_admin_connect, pg_admin_connect

pytestmark = pytest.mark.integration

T0 = datetime(2026, 11, 27, 12, 0, 0, 123456)


#: Per server kind: its admin connection, how it quotes a database name, the catalog URL of database {}.
SERVERS = {
    "postgres": (pg_admin_connect, '"{}"', f"postgresql+psycopg2://{PG_ADMIN['user']}@127.0.0.1:5432/{{}}"),
    "mysql": (mysql_admin_connect, "`{}`", "mysql+pymysql://root@127.0.0.1:3306/{}?charset=utf8mb4"),
}


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def catalog_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'catalog.db'}"
        return
    admin, quoted, url = SERVERS[request.param]
    name = f"snaprepl_rplog_{uuid.uuid4().hex[:8]}"
    with admin() as conn:
        conn.cursor().execute(f"CREATE DATABASE {quoted.format(name)}")
    try:
        yield url.format(name)
    finally:
        with admin() as conn:
            conn.cursor().execute(f"DROP DATABASE IF EXISTS {quoted.format(name)}")
            if request.param == "postgres":  # the role _grant_role made
                conn.cursor().execute(f"DROP ROLE IF EXISTS {quoted.format(name)}")


def _key(engine: sa.Engine) -> list[str]:
    with engine.connect() as conn:
        return list(sa.inspect(conn).get_pk_constraint("SYS_RPLOG")["constrained_columns"])


def _entries(engine: sa.Engine) -> set[tuple[str, str, datetime]]:
    t = m.SYS_RPLOG.c
    with engine.connect() as conn:
        return {tuple(row) for row in conn.execute(sa.select(t.TARGET, t.RLOG_ROWGUID, t.SNAPTIME))}  # type: ignore[misc]


def test_the_replay_log_keeps_its_entries_through_migration_0018_and_back(catalog_url: str) -> None:
    catalog = Catalog.from_connection(connection_from_url(catalog_url, "snaprepl_catalog"))
    engine = catalog.engine
    try:
        upgrade(engine, "0017")
        assert _key(engine) == ["TARGET", "RLOG_ROWGUID"]
        before = {(f"s{i % 2}.t@c", str(uuid.uuid4()), T0 + timedelta(seconds=i % 3)) for i in range(50)}
        with engine.begin() as conn:
            conn.execute(
                sa.table("SYS_RPLOG", sa.column("TARGET"), sa.column("RLOG_ROWGUID"), sa.column("SNAPTIME")).insert(),
                [{"TARGET": a, "RLOG_ROWGUID": g, "SNAPTIME": ts} for a, g, ts in before],
            )
        role = _grant_role(engine)
        upgrade(engine)
        assert _key(engine) == ["TARGET", "SNAPTIME", "RLOG_ROWGUID"]
        if role is not None:  # `snaprepl catalog grant`'s role can still write it
            with engine.connect() as conn:
                query = "SELECT has_table_privilege(%s, 'public.\"SYS_RPLOG\"', 'INSERT')"
                assert conn.exec_driver_sql(query, (role,)).scalar_one() is True
        if engine.dialect.name == "sqlite":  # the key is the table
            with engine.connect() as conn:
                ddl = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = 'SYS_RPLOG'").scalar_one()
            assert "WITHOUT ROWID" in ddl.upper()
        assert _entries(engine) == before
        with engine.connect() as conn:
            assert "ix_sys_rplog_target_snaptime" not in {i["name"] for i in sa.inspect(conn).get_indexes("SYS_RPLOG")}

        # a refresh's entries after it: one of them already listed (a rerun after a run that died)
        known_target, known_guid, known_ts = next(e for e in sorted(before) if e[0] == "s0.t@c")
        new = [(str(uuid.uuid4()), T0 + timedelta(minutes=1)) for _ in range(3)]
        catalog.record_applied("s0.t@c", [*new, (known_guid, known_ts)], None)
        expected = before | {("s0.t@c", g, ts) for g, ts in new}
        assert _entries(engine) == expected  # the known entry once, the new ones added
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
            conn.execute(
                m.SYS_RPLOG.insert(), [{"TARGET": known_target, "RLOG_ROWGUID": known_guid, "SNAPTIME": known_ts}]
            )
        assert sorted(catalog.replayed_since("s0.t@c", T0 + timedelta(seconds=30))) == sorted(g for g, _ in new)

        with engine.begin() as conn:
            _downgrade_to(conn, "0017")
        assert _key(engine) == ["TARGET", "RLOG_ROWGUID"]
        assert _entries(engine) == expected
    finally:
        engine.dispose()


def _grant_role(engine: sa.Engine) -> str | None:
    """On PostgreSQL, a role that may write SYS_RPLOG, named as the database (the fixture drops both)."""
    if engine.dialect.name != "postgresql":
        return None
    role = str(engine.url.database)
    with engine.begin() as conn:
        conn.exec_driver_sql(f'CREATE ROLE "{role}"')
        conn.exec_driver_sql(f'GRANT SELECT, INSERT, DELETE ON "SYS_RPLOG" TO "{role}"')
    return role


def _downgrade_to(connection: sa.Connection, revision: str) -> None:
    from alembic import command

    from snaprepl.catalog.migrate import alembic_config

    config = alembic_config()
    config.attributes["connection"] = connection
    command.downgrade(config, revision)

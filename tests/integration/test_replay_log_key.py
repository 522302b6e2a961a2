"""Migration 0018 (issue 24): the replay log keyed (TARGET, SNAPTIME, RLOG_ROWGUID), on the three
databases a catalog can live in. Entries recorded before the migration are all there after it, a
refresh's entries are still refused twice and skipped once known, and the way back restores the old
key."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.catalog.location import connection_from_url
from snaprepl.catalog.migrate import upgrade
from snaprepl.catalog.store import Catalog
from tests.support.catalog_dbs import catalog_url

pytestmark = pytest.mark.integration
__all__ = ["catalog_url"]  # the fixture

T0 = datetime(2026, 11, 27, 12, 0, 0, 123456)


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

"""Replay-log rows written in one driver call (:mod:`snaprepl.catalog.bulk_rows`) read back exactly as
SQLAlchemy's own ``insert()`` writes them, on each catalog database: COPY's text escapes, NULLs,
timestamps with and without microseconds (SQLite stores them as text that must compare right), and
a duplicate key raising SQLAlchemy's IntegrityError (the replay log's skip-known retry needs it)."""

from __future__ import annotations

import os
from datetime import datetime

import pytest
import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.catalog.bulk_rows import insert_rows
from snaprepl.database.sessions import create_engine
from tests.support.databases import RealDatabase

ODD = ["plain", "tab\there", "new\nline", "back\\slash", "\\N", "cr\rx"]


def replay_log(metadata: sa.MetaData, name: str) -> sa.Table:
    """A table shaped as SYS_RPLOG (its key, without its named index)."""
    return sa.Table(
        name,
        metadata,
        sa.Column("TARGET", m.NAME, primary_key=True),
        sa.Column("RLOG_ROWGUID", m.ASCII_IDENT, primary_key=True),
        sa.Column("SNAPTIME", m.TIMESTAMP, nullable=False),
    )


def test_bulk_rows_read_back_as_sqlalchemy_writes_them(real_db: RealDatabase, unique_name: str) -> None:
    """psycopg2 takes COPY, the other drivers (psycopg 3 on PostgreSQL too) executemany."""
    url = os.environ[f"AIRFLOW_CONN_{real_db.conn_id.upper()}"].replace("mysql://", "mysql+pymysql://", 1)
    drivers = ["postgresql://", "postgresql+psycopg2://"] if real_db.dialect == "postgres" else [""]
    for n, driver in enumerate(drivers):
        engine = create_engine(url.replace("postgresql://", driver, 1) if driver else url)
        _check_bulk_rows(engine, f"{unique_name}_{n}")


def _check_bulk_rows(engine: sa.Engine, unique_name: str) -> None:
    metadata = sa.MetaData()
    ours, theirs = replay_log(metadata, f"bulk_{unique_name}"), replay_log(metadata, f"orm_{unique_name}")
    metadata.create_all(engine)
    times = [datetime(2026, 1, 2, 3, 4, 5), datetime(2026, 1, 2, 3, 4, 5, 600), datetime(2026, 1, 2, 3, 4, 6, 1)]
    rows = [(f"snap{i % 2}", guid, times[i % 3]) for i, guid in enumerate(ODD)]
    columns = ("TARGET", "RLOG_ROWGUID", "SNAPTIME")
    try:
        with engine.begin() as conn:
            insert_rows(conn, ours, columns, rows)
            conn.execute(sa.insert(theirs), [dict(zip(columns, row, strict=True)) for row in rows])
        with engine.connect() as conn:
            for cutoff in times:
                got = [
                    sorted(tuple(r) for r in conn.execute(sa.select(t).where(t.c.SNAPTIME >= cutoff)))
                    for t in (ours, theirs)
                ]
                assert got[0] == got[1]
                assert len(got[0]) == sum(1 for row in rows if row[2] >= cutoff)
        assert sorted(got[0]) == sorted(r for r in rows if r[2] >= times[-1])
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
            insert_rows(conn, ours, columns, [("other", "fresh", times[0]), rows[0]])
        with engine.connect() as conn:  # the failed call left nothing behind
            assert conn.execute(sa.select(sa.func.count()).select_from(ours)).scalar_one() == len(rows)
    finally:
        metadata.drop_all(engine)
        engine.dispose()

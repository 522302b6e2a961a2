"""The apply step of an initial load (:func:`snaprepl.bidir.init.apply_staged`) on each real database as
subscriber: an empty replica gets the staged rows and nothing else (no log work for them, a user's
concurrent row kept), a loaded one is merged (stale rows updated, rows the publisher lacks deleted)."""

from __future__ import annotations

import uuid

from snaprepl.bidir.init import apply_staged, is_empty
from snaprepl.bidir.init_stage import CHUNK
from snaprepl.bidir.sides import Side
from snaprepl.common.progress import Progress
from snaprepl.database.sessions import Database
from snaprepl.dialects import Column
from tests.integration.bidir.test_staged_apply import ROWS, make_side, table_and_log
from tests.support.databases import RealDatabase

#: What the publisher holds: make_side's ROWS (ids 1-4), and ids 5-10; versions pub@<id>.
PUBLISHED = {**{i: (n, g) for i, n, g in ROWS}, **{i: (f"p{i}", f"pub@{i}") for i in range(5, 11)}}


def stage_published(db: RealDatabase, side: Side, rows_per_chunk: int) -> tuple[str, list[tuple[int, int]]]:
    """PUBLISHED in a staging table beside the replica, as the load's copy leaves it; its chunks."""
    d, q = side.dialect, db.q
    stage = f"stage_{uuid.uuid4().hex[:8]}"
    by_name = {c.name: c for c in side.columns}
    columns = [by_name["id"], by_name["name"], by_name["ROWGUID"], Column(CHUNK, "bigint")]
    with side.db.session() as session:
        session.execute(d.create_scratch_table_sql(side.log.snl_schema, stage, columns))
    values = ", ".join(f"({i}, '{n}', '{g}', {(i - 1) // rows_per_chunk})" for i, (n, g) in PUBLISHED.items())
    db.run(f"INSERT INTO {q(stage)} (id, name, {q('ROWGUID')}, {q(CHUNK)}) VALUES {values}")
    chunks = {}
    for i in PUBLISHED:
        chunks[(i - 1) // rows_per_chunk] = chunks.get((i - 1) // rows_per_chunk, 0) + 1
    return stage, sorted(chunks.items())


def apply(side: Side, stage: str, chunks: list[tuple[int, int]], *, fresh: bool) -> None:
    progress = Progress("load", sum(n for _, n in chunks))
    apply_staged(side, stage, ["id", "name", "ROWGUID"], chunks, (False, fresh), progress)
    assert progress.rows == len(PUBLISHED)


def test_an_empty_replica_gets_the_staged_rows_without_log_work(real_db: RealDatabase) -> None:
    side = make_side(real_db, publisher=False)
    q = real_db.q
    table = q(side.log.snl_table)
    with side.db.session() as session:
        for statement in side.dialect.replicated_delete_sql(side.table, "1 = 1"):
            session.execute(statement)
    assert is_empty(side)
    assert table_and_log(real_db, side) == ({}, {}), "the replicated deletes were not logged"
    stage, chunks = stage_published(real_db, side, 3)
    # A user's row written while the load runs: logged, and kept over the publisher's.
    real_db.run(f"INSERT INTO {table} (id, name) VALUES (5, 'mine')")
    assert not is_empty(side)

    apply(side, stage, chunks, fresh=True)

    rows, log = table_and_log(real_db, side)
    assert rows[5][0] == "mine"
    assert {k: v for k, v in rows.items() if k != 5} == {k: v for k, v in PUBLISHED.items() if k != 5}
    assert list(log) == [5], "the load's own rows cause no log entries"
    assert log[5][0] == "I"


def test_a_loaded_replica_is_merged(real_db: RealDatabase) -> None:
    """A load run again over a replica (resumed after a kill, or a reload): make_side's ROWS are there."""
    side = make_side(real_db, publisher=False)  # ids 1-4, versions pub@1-4
    q = real_db.q
    table = q(side.log.snl_table)
    real_db.run(f"UPDATE {table} SET name = 'stale', {q('ROWGUID')} = 'pub@old' WHERE id = 2")
    real_db.run(f"UPDATE {table} SET name = 'lost', {q('ROWGUID')} = 'pub@gone' WHERE id = 4")
    real_db.run(f"INSERT INTO {table} (id, name, {q('ROWGUID')}) VALUES (99, 'gone', 'pub@99')")  # replicated
    stage, chunks = stage_published(real_db, side, 4)

    apply(side, stage, chunks, fresh=False)

    rows, log = table_and_log(real_db, side)
    assert rows == PUBLISHED, "stale rows updated, missing ones inserted, the one the publisher lacks deleted"
    assert log == {}, "replicated writes only"


def test_a_postgres_staging_table_numbers_commits_of_at_most_rows_per_commit(pg_db: RealDatabase) -> None:
    """What the COPY pipe loads into: rows arriving from several sessions get chunk numbers by themselves."""
    database = Database.for_conn_id(pg_db.conn_id)
    d, stage = database.dialect, f"stage_{uuid.uuid4().hex[:8]}"
    with database.session() as session:
        session.execute(d.create_scratch_table_sql("public", stage, [Column("id", "integer"), Column(CHUNK, "bigint")]))
        for statement in d.numbered_chunks_sql("public", stage, CHUNK, 7):
            session.execute(statement)
    for first in (1, 51):  # two sessions, as two pipe tasks
        pg_db.run(f"INSERT INTO {stage} (id) SELECT g FROM generate_series({first}, {first + 49}) g")
    sizes = dict(pg_db.rows(f'SELECT "{CHUNK}", COUNT(*) FROM {stage} GROUP BY 1'))
    assert sum(sizes.values()) == 100
    assert max(sizes.values()) <= 7 and len(sizes) >= 100 // 7 + 1
    assert pg_db.rows(f"SELECT relpersistence FROM pg_class WHERE relname = '{stage}'") == [("u",)]
    pg_db.run(f"DROP TABLE {stage}")
    assert pg_db.rows(f"SELECT COUNT(*) FROM pg_class WHERE relname LIKE '{stage}%'") == [(0,)], "sequence dropped too"

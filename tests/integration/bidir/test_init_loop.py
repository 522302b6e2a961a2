"""A PostgreSQL subscriber's initial load commits its chunks inside the server: one client statement
per run of chunks, not a round trip per chunk, and still one transaction per chunk (issue 24)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from tests.integration.bidir.test_init_apply import PUBLISHED, apply, stage_published
from tests.integration.bidir.test_staged_apply import make_side, table_and_log
from tests.support.databases import RealDatabase


def test_a_postgres_load_commits_chunk_after_chunk_without_a_round_trip_each(pg_db: RealDatabase) -> None:
    side = make_side(pg_db, publisher=False)  # ids 1-4 loaded (a resumed load: the merge, not the insert)
    pg_db.run(f"UPDATE {side.log.snl_table} SET name = 'stale', \"ROWGUID\" = 'pub@old' WHERE id = 2")
    stage, chunks = stage_published(pg_db, side, 1)  # ten chunks of one row
    sent: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(statement)

    engine = side.db.engine()
    event.listen(engine, "before_cursor_execute", count)
    try:
        apply(side, stage, chunks, fresh=False)
    finally:
        event.remove(engine, "before_cursor_execute", count)

    rows, log = table_and_log(pg_db, side)
    assert rows == PUBLISHED and log == {}, "the chunks merged as replicated writes"
    assert len(sent) < len(chunks), f"{len(sent)} statements for {len(chunks)} chunks: {sent}"
    # the rows the load wrote: id 2 (stale) and 5-10 (missing), each in a chunk of its own
    written = f"SELECT COUNT(DISTINCT xmin::text) FROM {side.log.snl_table} WHERE id = 2 OR id >= 5"
    assert pg_db.rows(written) == [(7,)], "each chunk committed by itself"

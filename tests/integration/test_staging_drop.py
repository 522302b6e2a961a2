"""An incremental refresh drops its staging table while the catalog records its last batch (issue 24:
SQLite frees a million rows' pages in half a second): the table is gone after a refresh of several
batches, and after one whose catalog record failed once the destination had committed; the next
refresh then makes the copy equal to its source."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from snaprepl import api
from snaprepl.errors import RefreshFailed
from snaprepl.refresh.staged_entries import BatchRecords
from tests.support.databases import RealDatabase

pytestmark = pytest.mark.integration


def _staging(db: RealDatabase) -> list[str]:
    return [t for (t,) in db.rows("SELECT tablename FROM pg_tables") if t.startswith("snaprepl_inc")]


def test_the_staging_table_is_gone_after_a_refresh_and_after_its_catalog_record_failed(
    pg_db: RealDatabase, catalog: Any, settings: Any, refresher: Any, unique_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, dst = f"{unique_name}_s", f"{unique_name}@{pg_db.conn_id}"
    kw = {"catalog": catalog, "settings": replace(settings, refresh_commit_rows=2), "refresher": refresher}
    pg_db.run(
        f"CREATE TABLE {src} (id int PRIMARY KEY, v int)", f"INSERT INTO {src} SELECT g, g FROM generate_series(1, 9) g"
    )
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(None, f"{src}@{pg_db.conn_id}", None, dst, **kw)
    query = "SELECT id, v FROM {} ORDER BY id"

    for first in (1, 4, 7):  # three transactions: three SNAPTIME groups, three batches
        pg_db.run(f"UPDATE {src} SET v = v + 10 WHERE id BETWEEN {first} AND {first + 2}")
    outcome = api.repl_refresh_inc_snapshot(dst, **kw)
    assert outcome.batches == 3 and outcome.rows_upserted == 9
    assert _staging(pg_db) == [], "the staging table is left behind"
    assert pg_db.rows(query.format(unique_name)) == pg_db.rows(query.format(src))

    committed = BatchRecords.commit
    calls: list[int] = []

    def fails_on_the_last(self: BatchRecords, watermark: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("the catalog went away")
        return committed(self, watermark)

    for first in (1, 4, 7):
        pg_db.run(f"UPDATE {src} SET v = v + 100 WHERE id BETWEEN {first} AND {first + 2}")
    monkeypatch.setattr(BatchRecords, "commit", fails_on_the_last)
    with pytest.raises(RefreshFailed, match="the catalog went away"):
        api.repl_refresh_inc_snapshot(dst, **kw)
    assert _staging(pg_db) == [], "the failed run left its staging table"
    monkeypatch.setattr(BatchRecords, "commit", committed)
    api.repl_refresh_inc_snapshot(dst, **kw)
    assert pg_db.rows(query.format(unique_name)) == pg_db.rows(query.format(src))
    assert _staging(pg_db) == []

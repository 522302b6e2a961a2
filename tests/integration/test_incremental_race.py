"""An incremental refresh reads its changes once, in the Spark job that stages them (no count first):
entries that vanish between the window's check and that read leave an empty staging table, and the
refresh then applies nothing and keeps its place in the log."""

from __future__ import annotations

import pytest

from snaprepl import api
from snaprepl.refresh import incremental

pytestmark = pytest.mark.spark


def test_entries_gone_before_the_read_apply_nothing(
    pg_db, catalog, settings, refresher, unique_name, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, dst = f"{unique_name}_s", f"{unique_name}@{pg_db.conn_id}"
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)", f"INSERT INTO {src} VALUES (1, 1), (2, 2)")
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(None, f"{src}@{pg_db.conn_id}", None, dst, **kw)
    before = catalog.snapshot(f"public.{dst}")

    pg_db.run(f"UPDATE {src} SET v = 20 WHERE id = 2")
    found = incremental.pending_window

    def window_then_purge(*args, **kwargs):  # the log loses its entries after the check found them
        window = found(*args, **kwargs)
        assert window is not None, "the check saw the entry"
        pg_db.run(f'DELETE FROM "RLOG_{src}"')
        return window

    monkeypatch.setattr(incremental, "pending_window", window_then_purge)
    outcome = api.repl_refresh_inc_snapshot(dst, **kw)

    assert (outcome.rows_upserted, outcome.rows_deleted, outcome.batches) == (0, 0, 0)
    assert outcome.last_ts == before.sn_last_ts
    assert catalog.snapshot(f"public.{dst}").sn_last_ts == before.sn_last_ts
    assert pg_db.rows(f"SELECT id, v FROM {unique_name} ORDER BY id") == [(1, 1), (2, 2)]
    assert not [t for (t,) in pg_db.rows("SELECT tablename FROM pg_tables") if t.startswith("snaprepl_inc")]

"""A source transaction left open across incremental refreshes while other sessions commit: its
change must reach the copy once it commits (exact watermarks)."""

from __future__ import annotations

import time
from typing import Any

from snaprepl import api
from tests.support.databases import RealDatabase


def two_row_snapshot(db: RealDatabase, dest: RealDatabase, unique_name: str, kw: dict[str, object]) -> tuple[str, str]:
    src, dst = f"{unique_name}_s", f"{unique_name}@{dest.conn_id}"
    db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v varchar(40))", f"INSERT INTO {src} VALUES (1, 'v1'), (2, 'a')")
    api.repl_create_snapshot_log(f"{src}@{db.conn_id}", catalog=kw["catalog"])
    api.repl_create_inc_snapshot(None, f"{src}@{db.conn_id}", None, dst, **kw)
    return src, dst


def long_transaction_survives(db: RealDatabase, long_conn: Any, kw: dict[str, object], unique_name: str) -> None:
    """Open a transaction changing row 1, refresh twice while others commit, commit, refresh."""
    src, dst = two_row_snapshot(db, db, unique_name, kw)
    cur = long_conn.cursor()
    cur.execute("BEGIN")
    cur.execute(f"UPDATE {src} SET v = 'from-long-tx' WHERE id = 1")
    for n in range(2):
        time.sleep(1.1)  # later stamps; MariaDB's trx_started has whole seconds
        db.run(f"UPDATE {src} SET v = 'b{n}' WHERE id = 2")
        api.repl_refresh_inc_snapshot(dst, **kw)
    cur.execute("COMMIT")
    api.repl_refresh_inc_snapshot(dst, **kw)
    assert db.rows(f"SELECT id, v FROM {unique_name} ORDER BY id") == [(1, "from-long-tx"), (2, "b1")]

#!/usr/bin/env bash
# The main job on the embedded default (SQLite): a source table with a snapshot log, changes to
# it, and what the log recorded.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
. scripts/env.sh

rm -rf "$DEMO_DIR" && mkdir -p "$AIRFLOW_HOME"
step() { printf '\n== %s\n' "$*"; }
shop() { "$VENV/bin/python" - "$DEMO_DIR/shop.db" "$@" <<'PY'
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
for statement in sys.argv[2:]:
    rows = conn.execute(statement).fetchall()
    for row in rows:
        print("   ", row)
PY
}

step "airflow db migrate (creates Airflow's tables and the snaprepl SYS_* catalog)"
airflow db migrate >/dev/null

step "a source table in $DEMO_DIR/shop.db"
shop "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, amount NUMERIC(10,2))" \
     "INSERT INTO orders VALUES (1, 'ada', 10.50), (2, 'grace', 20.00), (3, 'linus', 7.25)"

step "snaprepl sql \"CREATE SNAPSHOT LOG FOR orders\""
snaprepl sql "CREATE SNAPSHOT LOG FOR orders"

step "changes: an insert, an update, a key change and a delete"
shop "INSERT INTO orders VALUES (4, 'barbara', 99.99)" \
     "UPDATE orders SET amount = 21.00 WHERE id = 2" \
     "UPDATE orders SET id = 30 WHERE id = 3" \
     "DELETE FROM orders WHERE id = 1"

step "what RLOG_orders recorded (key, SNAPTIME, DMLTYPE, RLOG_ROWGUID)"
shop "SELECT * FROM RLOG_orders ORDER BY RLOG_id"

step "snaprepl status"
snaprepl status

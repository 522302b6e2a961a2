#!/usr/bin/env bash
# The main job on the embedded default: SQLite databases, Spark in local mode, Airflow on SQLite.
# A source table gets a snapshot log; an incremental and a nonincremental snapshot copy it to another
# database; the source changes (inserts, updates, a key change, deletes); the generated Airflow DAGs
# refresh both snapshots; source and destinations are printed side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
. scripts/env.sh
export AIRFLOW_CONN_DEMO_SHOP="sqlite:///$DEMO_DIR/shop.db"
export AIRFLOW_CONN_DEMO_WAREHOUSE="sqlite:///$DEMO_DIR/warehouse.db"
export AIRFLOW__LOGGING__LOGGING_LEVEL=WARNING

rm -rf "$DEMO_DIR" && mkdir -p "$AIRFLOW_HOME"
step() { printf '\n== %s\n' "$*"; }
db() { # db FILE SQL...: run statements on a demo SQLite database, printing rows
  "$VENV/bin/python" - "$DEMO_DIR/$1" "${@:2}" <<'PY'
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
for statement in sys.argv[2:]:
    cursor = conn.execute(statement)
    if cursor.description:
        print("    " + " | ".join(d[0] for d in cursor.description))
        for row in cursor.fetchall():
            print("    " + " | ".join("NULL" if v is None else str(v) for v in row))
PY
}
side_by_side() {
  step "source shop.orders | incremental snapshot warehouse.orders_copy | nonincremental warehouse.totals"
  paste <(db shop.db "SELECT id, customer, amount FROM orders ORDER BY id") \
        <(db warehouse.db "SELECT id, customer, amount FROM orders_copy ORDER BY id") \
        <(db warehouse.db "SELECT customer, orders, total FROM totals ORDER BY customer") | column -t -s $'\t'
}

step "airflow db migrate: Airflow's tables and the snaprepl SYS_* catalog"
airflow db migrate >/dev/null

step "a source table in shop.db"
db shop.db "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, amount DECIMAL(10,2), placed TIMESTAMP)" \
  "INSERT INTO orders VALUES (1, 'ada', 10.50, '2026-11-01 09:00:00.123456'), (2, 'grace', 20.00, '2026-11-02 10:00:00'),
                             (3, 'linus', 7.25, '2026-11-03 11:00:00'), (4, 'ada', 99.99, '2026-11-04 12:00:00')"

step "snaprepl sql: a snapshot log, an incremental and a nonincremental snapshot (each first copy is a Spark job)"
cat <<'SQL' | tee /dev/stderr | snaprepl sql -f -
CREATE SNAPSHOT LOG FOR orders@demo_shop;
CREATE SNAPSHOT orders_copy@demo_warehouse FROM orders@demo_shop;
CREATE NONINCREMENTAL SNAPSHOT totals@demo_warehouse
  AS 'SELECT customer, COUNT(*) AS orders, SUM(amount) AS total FROM orders@demo_shop GROUP BY customer';
SQL
side_by_side

step "changes: an insert, an update, a key change (3 -> 30) and a delete"
db shop.db "INSERT INTO orders VALUES (5, 'barbara', 42.00, '2026-11-05 13:00:00')" \
  "UPDATE orders SET amount = 21.00 WHERE id = 2" "UPDATE orders SET id = 30 WHERE id = 3" "DELETE FROM orders WHERE id = 1"
step "what the snapshot log recorded (key, SNAPTIME, DMLTYPE, RLOG_ROWGUID)"
db shop.db "SELECT * FROM RLOG_orders ORDER BY RLOG_id"

for dag in $(snaprepl status --json | "$VENV/bin/python" -c 'import json,sys; print(" ".join(s["dag_id"] for s in json.load(sys.stdin)["snapshots"]))'); do
  step "airflow dags test $dag (a generated DAG: spark-submit of spark_jobs/refresh_snapshot.py)"
  airflow dags test "$dag" >/dev/null 2>&1 || { echo "the DAG run failed; see $AIRFLOW_HOME/logs"; exit 1; }
  echo "    succeeded"
done
side_by_side

step "snaprepl status"
snaprepl status --no-probe

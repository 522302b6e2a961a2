#!/usr/bin/env bash
# The main job on the embedded default: SQLite databases, Spark in local mode, Airflow on SQLite.
# A source table gets a snapshot log; an incremental and a nonincremental snapshot copy it to another
# database; the source changes (inserts, updates, a key change, deletes); the generated Airflow DAGs
# refresh both snapshots; source and destinations are printed side by side. Then bi-directional
# replication: a published table, a subscriber, changes on both sides with a conflict, the
# publication's sync DAG.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
. scripts/env.sh
export AIRFLOW_CONN_DEMO_SHOP="sqlite:///$DEMO_DIR/shop.db"
export AIRFLOW_CONN_DEMO_WAREHOUSE="sqlite:///$DEMO_DIR/warehouse.db"
export AIRFLOW_CONN_DEMO_BRANCH="sqlite:///$DEMO_DIR/branch.db"
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

step "bi-directional: publish shop.customers, subscribe branch.db, load it"
db shop.db "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT)" \
  "INSERT INTO customers VALUES (1, 'ada', 'London'), (2, 'grace', 'New York'), (3, 'linus', 'Helsinki')"
cat <<'SQL' | tee /dev/stderr | snaprepl sql -f -
REPL_CREATE_SNAPSHOT_PUB('customers@demo_shop', 2);
REPL_CREATE_SNAPSHOT_SUB(REPL_SNP_SERVER('demo_branch'), 'customers@demo_shop', 2);
REPL_INIT_SNAPSHOT(REPL_SERVER_NAME('demo_branch'), 'customers@demo_shop', 2);
SQL

step "changes on both sides; both update customer 2 (a conflict: the publisher wins by default)"
db shop.db "UPDATE customers SET city = 'Arlington' WHERE id = 2" "INSERT INTO customers (id, name, city) VALUES (4, 'barbara', 'Boston')"
db branch.db "UPDATE customers SET city = 'Washington' WHERE id = 2" "UPDATE customers SET city = 'Portland' WHERE id = 3" \
  "DELETE FROM customers WHERE id = 1"
dag=$(snaprepl status --json | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["publications"][0]["dag_id"])')
step "airflow dags test $dag (pull from branch, then push to it: spark-submits of spark_jobs/sync_publication.py)"
airflow dags test "$dag" >/dev/null 2>&1 || { echo "the DAG run failed; see $AIRFLOW_HOME/logs"; exit 1; }
echo "    succeeded"
step "publisher shop.customers | subscriber branch.customers (same rows, same ROWGUID versions)"
paste <(db shop.db "SELECT id, name, city, ROWGUID FROM customers ORDER BY id") \
      <(db branch.db "SELECT id, name, city, ROWGUID FROM customers ORDER BY id") | column -t -s $'\t'

step "Spark modes: the same incremental refresh by spark-submit, then on a Spark Connect server"
export SNAPREPL_STATE_DIR="$DEMO_DIR/state"
port=$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
trap 'snaprepl spark-server stop >/dev/null 2>&1 || true' EXIT
timed() { # timed LABEL: an order changes, then UPDATE SNAPSHOT, timed as a whole command
  db shop.db "UPDATE orders SET amount = amount + 1 WHERE id = 2"
  local start=$EPOCHREALTIME
  snaprepl sql "UPDATE SNAPSHOT orders_copy@demo_warehouse" | sed 's/^/    /'
  awk -v a="$start" -v b="$EPOCHREALTIME" -v what="$1" 'BEGIN { printf "    %s: %.1f s (the whole command)\n", what, b - a }'
}
timed "spark-submit (spark_mode = submit, the default)"
connection=$(snaprepl spark-server start --port "$port" | tail -n 1)
eval "export $connection"  # AIRFLOW_CONN_SNAPREPL_SPARK: a spark_connect connection (token in it)
timed "Spark Connect, first run (opens the session)"
timed "Spark Connect, next run (the session is reused)"
snaprepl spark-server stop >/dev/null
unset AIRFLOW_CONN_SNAPREPL_SPARK

step "snaprepl status"
snaprepl status --no-probe

step "the Replication page (Airflow's UI: snapshots, lag, backlog, conflicts, history, Refresh buttons)"
echo "    . scripts/setup.sh && . scripts/env.sh && airflow standalone"
echo "    then open http://localhost:8080/plugin/replication (\"Replication\" in the navigation); the page itself"
echo "    is served at http://localhost:8080/snaprepl/ . airflow standalone prints the admin's password."

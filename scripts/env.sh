#!/usr/bin/env bash
# The demo's Airflow environment (source it): everything lives under .demo/ in the checkout.
# SQLite metadata database; the catalog connection points at it too, because Airflow 3 task
# processes cannot read the metadata database's URL from Airflow's configuration.
: "${SNAPREPL_ROOT:?source scripts/setup.sh first}"
DEMO_DIR="$SNAPREPL_ROOT/.demo"
export DEMO_DIR
export AIRFLOW_HOME="$DEMO_DIR/airflow"
export AIRFLOW__CORE__DAGS_FOLDER="$SNAPREPL_ROOT/dags"
export AIRFLOW__CORE__PLUGINS_FOLDER="$SNAPREPL_ROOT/plugins"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__DATABASE__EXTERNAL_DB_MANAGERS=snaprepl.catalog.db_manager.SnapreplDBManager
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN="sqlite:///$AIRFLOW_HOME/airflow.db"
export AIRFLOW_CONN_SNAPREPL_CATALOG="$AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"
export AIRFLOW_CONN_SNAPREPL_DEFAULT="sqlite:///$DEMO_DIR/shop.db"

"""The Replication page in Airflow's UI: a FastAPI app served by the api-server (see :mod:`.app`).

``access`` asks Airflow's auth manager what the logged-in user may read and trigger, ``data`` turns
the catalog (what ``snaprepl status`` reports, the conflict ledger and the run history) into the
page's JSON, ``trigger`` starts a snapshot's DAG through Airflow's REST API as that user, and
``static/`` holds the page (the chart library is vendored there by ``scripts/setup.sh``).
"""

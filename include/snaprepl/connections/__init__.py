"""Airflow connections: looked up and turned into what drivers need (``lookup``), and ``AIRFLOW_CONN_*`` values
parsed as Airflow parses them (``uris``)."""

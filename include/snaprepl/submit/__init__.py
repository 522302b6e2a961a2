"""Submitting Spark jobs (CLI and Airflow side; never imports pyspark)."""

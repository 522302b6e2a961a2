"""What every layer shares, importable without Airflow, Spark or a database: table and DAG names, Airflow's options
read as Airflow would, argument checks, timeouts, progress lines, JDBC jars, schedules and terminal-safe text."""

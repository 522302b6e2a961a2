"""A spark-submit that ends without a result is named, without its command line."""

from __future__ import annotations

from airflow.exceptions import AirflowException

from snaprepl.submit.submission import error_from_result


def test_a_job_without_a_result_is_named_and_its_command_line_left_out() -> None:
    failure = AirflowException(
        "Cannot execute: spark-submit --master local[2] --conf spark.driver.extraJavaOptions=-Dx=1 "
        "--name snaprepl-refresh-1a2b3c4d /work/main/include/snaprepl/refresh/job.py --snapshot "
        "public.orders@dst --run-id 1a2b3c4d. Error code is: 137."
    )
    error = error_from_result(None, failure, "snaprepl-refresh-1a2b3c4d")
    text = str(error)
    assert "Spark job snaprepl-refresh-1a2b3c4d ended without a result: spark-submit exited with code 137" in text
    assert "--master" not in text and "job.py" not in text and "\n" not in text
    assert "task log" in text


def test_other_failures_keep_their_first_line() -> None:
    error = error_from_result(None, FileNotFoundError("spark-submit: not found\nmore"), "job-x")
    assert str(error).startswith("the Spark job job-x ended without a result: spark-submit: not found;")

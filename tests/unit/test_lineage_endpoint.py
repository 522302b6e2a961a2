"""Where a connection points, for telling whether two tables are the same table."""

from __future__ import annotations

from pathlib import Path

import pytest

from snaprepl.catalog.table_lineage import endpoint


def test_connection_ids_pointing_at_one_database_are_one_place(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_EP_A", "postgresql://u:pw@LOCALHOST:5432/shop")
    monkeypatch.setenv("AIRFLOW_CONN_EP_B", "postgresql://other@127.0.0.1:5432/shop")
    monkeypatch.setenv("AIRFLOW_CONN_EP_C", "postgresql://u@127.0.0.1:5432/warehouse")
    monkeypatch.setenv("AIRFLOW_CONN_EP_D", "mysql://u@127.0.0.1:3306/shop")
    assert endpoint("ep_a") == endpoint("ep_b")
    assert endpoint("ep_a") != endpoint("ep_c")
    assert endpoint("ep_a") != endpoint("ep_d")


def test_sqlite_files_are_compared_by_their_real_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "sub")
    monkeypatch.setenv("AIRFLOW_CONN_EP_F1", f"sqlite:///{tmp_path}/sub/x.db")
    monkeypatch.setenv("AIRFLOW_CONN_EP_F2", f"sqlite:///{tmp_path}/link/../sub/x.db")
    monkeypatch.setenv("AIRFLOW_CONN_EP_F3", f"sqlite:///{tmp_path}/sub/y.db")
    assert endpoint("ep_f1") == endpoint("ep_f2")
    assert endpoint("ep_f1") != endpoint("ep_f3")

"""How metrics and lineage name a copy's tables and the copy itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from snaprepl.airflow.metrics import metric_suffix, tag_value
from snaprepl.catalog.table_lineage import Place, openlineage_dataset


def test_a_copy_is_one_segment_of_a_metric_name_and_a_valid_tag_value() -> None:
    assert metric_suffix("main.orders@dst") == "main__orders_dst"
    assert metric_suffix("public.t@src:sub 1") == "public__t_src_sub_1"
    assert tag_value("main.orders@dst") == "main.orders_dst"


def test_tables_are_named_as_openlineage_names_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_OL_PG", "postgresql://u:pw@db.example:5433/shop")
    monkeypatch.setenv("AIRFLOW_CONN_OL_MY", "mysql://u@127.0.0.1:3306/shop")
    monkeypatch.setenv("AIRFLOW_CONN_OL_LITE", f"sqlite:///{tmp_path}/x.db")
    assert openlineage_dataset(Place("ol_pg", "sales", "orders")) == ("postgres://db.example:5433", "shop.sales.orders")
    assert openlineage_dataset(Place("ol_my", "shop", "orders")) == ("mysql://127.0.0.1:3306", "shop.orders")
    assert openlineage_dataset(Place("ol_lite", "main", "orders")) == (f"sqlite://{tmp_path}/x.db", "main.orders")

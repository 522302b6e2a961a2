"""Where a connection points, for telling whether two tables are the same table."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from snaprepl.catalog.records import SnapshotRecord
from snaprepl.catalog.table_lineage import chain_levels, endpoint


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


def _snapshot(name: str, source: str, query: str, dest: str, table: str) -> SnapshotRecord:
    return SnapshotRecord(name, query, source, dest, "main", table, datetime(2026, 1, 1))


def test_chain_levels_put_a_snapshot_after_the_ones_whose_copies_it_reads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A group applies a member reading another member's destination in a later level (issue 25)."""
    monkeypatch.setenv("AIRFLOW_CONN_CH_SRC", f"sqlite:///{tmp_path}/src.db")
    monkeypatch.setenv("AIRFLOW_CONN_CH_DST", f"sqlite:///{tmp_path}/dst.db")
    monkeypatch.setenv("AIRFLOW_CONN_CH_DST2", f"sqlite:///{tmp_path}/../{tmp_path.name}/dst.db")  # the same file
    first = _snapshot("a", "ch_src", "SELECT id FROM main.a", "ch_dst", "a_copy")
    second = _snapshot("b", "ch_dst2", "SELECT id FROM main.a_copy", "ch_dst", "a_copy2")
    third = _snapshot("c", "ch_dst", "SELECT id, x FROM main.a_copy2 WHERE x > 0", "ch_dst", "a_copy3")
    alone = _snapshot("d", "ch_src", "SELECT id FROM main.d", "ch_dst", "d_copy")
    other = _snapshot("e", "ch_src", "SELECT id FROM main.a_copy", "ch_dst", "e_copy")  # not the copy: another file
    assert chain_levels([third, second, first, alone, other]) == [["a", "d", "e"], ["b"], ["c"]]
    assert chain_levels([first, alone]) == [["a", "d"]]
    assert chain_levels([]) == []

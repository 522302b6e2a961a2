"""The progress lines and the command line's bar (rendering; the bar on a real terminal is tested in
tests/integration/test_progress.py)."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from snaprepl.common.progress import PROGRESS_FILE_ENV, Progress, bar_while, describe, render_bar


def test_a_progress_logs_each_step_and_keeps_the_latest_state_in_its_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state_file = tmp_path / "progress.json"
    monkeypatch.setenv(PROGRESS_FILE_ENV, str(state_file))
    with caplog.at_level(logging.INFO, logger="snaprepl.progress"):
        progress = Progress("incremental refresh of t@c", 5).start()
        progress.advance(2)
        progress.advance(3)
    lines = [r.getMessage() for r in caplog.records]
    assert [line.split(": ")[2].split(",")[0] for line in lines] == [
        "0 rows so far of 5 (0%)",
        "2 rows so far of 5 (40%)",
        "5 rows so far of 5 (100%)",
    ]
    assert all("rows/s" in line and "s elapsed" in line for line in lines)
    assert json.loads(state_file.read_text())["rows"] == 5


def test_an_estimated_total_is_marked_and_a_copy_reports_rows_in_proportion_to_its_tasks() -> None:
    progress = Progress("complete refresh of t@c", 1000, estimated=True, bar=True)
    progress.tasks(3, 4)
    assert progress.rows == 750 and describe(progress.state()).startswith("750 rows so far of ~1000 (75%)")
    progress.reached(990, total=990)
    assert describe(progress.state()).startswith("990 rows so far of 990 (100%)")
    assert render_bar(progress.state(), width=10).startswith("[##########] 100% complete refresh of t@c")
    assert render_bar({**progress.state(), "total": None}, width=4).startswith("[????] complete refresh")


def test_no_bar_is_drawn_off_a_terminal(tmp_path: Path) -> None:
    state_file = tmp_path / "progress.json"
    state_file.write_text(json.dumps({**Progress("x", 10, bar=True).state(), "rows": 10}))
    out = io.StringIO()
    with bar_while(state_file, out, every=0.01):
        pass
    assert out.getvalue() == ""

"""Text for a terminal: control characters from names and values never reach it raw."""

from __future__ import annotations

import re

import pytest

from snaprepl.common.table_names import Ident
from snaprepl.common.terminal import visible
from snaprepl.errors import InvalidName
from snaprepl.reporting.render import render_history, render_text

TITLE = "k\x1b]0;PWNED\x07\x1b[31m"
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # every control character but a newline


def test_every_control_character_is_written_as_a_visible_escape() -> None:
    assert visible(TITLE) == "k\\x1b]0;PWNED\\x07\\x1b[31m"
    assert visible("t\u009bx\x7f\u0080\u009f") == "t\\u009bx\\x7f\\u0080\\u009f"
    assert visible("a\nb\tc\rd\x00") == "a\\nb\\tc\\rd\\x00"
    assert visible("naïve ünïcode, 東京, \u00a0") == "naïve ünïcode, 東京, \u00a0", "printable text stays as it is"
    assert visible(42) == "42"


@pytest.mark.parametrize("name", ["a\u009bb", "a\x7fb", "a\u0085b", "a\x1bb", "a\nb"])
def test_identifiers_with_c0_del_or_c1_controls_are_refused(name: str) -> None:
    with pytest.raises(InvalidName, match="control characters") as refused:
        Ident(name, quoted=True)
    assert not RAW_CONTROL.search(str(refused.value)), "the refusal itself quotes the name escaped"


def test_status_and_history_tables_print_no_raw_control_character() -> None:
    from datetime import datetime

    from snaprepl.catalog.records import HistoryRecord

    report = {
        "catalog": "sqlite database /tmp/x\x1b[2J.db",
        "snapshot_logs": [
            {
                "source": "public.t\u009b@c",
                "kind": "plain",
                "rlog": "RLOG_t",
                "key_columns": [TITLE],
                "purged_before": None,
                "purge_waits_for": None,
            }
        ],
        "snapshots": [],
        "servers": [],
        "publications": [],
        "conflicts": [],
    }
    text = render_text(report)
    assert "k\\x1b]0;PWNED\\x07\\x1b[31m" in text and "t\\u009b@c" in text and "x\\x1b[2J.db" in text
    assert not RAW_CONTROL.search(text)
    run = HistoryRecord(
        rh_copy="public.t\u009b@c", rh_kind="complete", rh_started=datetime(2026, 1, 1), rh_ended=datetime(2026, 1, 1),
        rh_outcome="failed", rh_error=f'invalid input syntax for type integer: "{TITLE}"',
    )  # fmt: skip
    history = render_history([run])
    assert "\\x1b]0;PWNED\\x07" in history and not RAW_CONTROL.search(history)

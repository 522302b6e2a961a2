"""A refresh's staged entries come out per batch in the replay log's key order (SNAPTIME, then
RLOG_ROWGUID), every entry once, each SNAPTIME converted by the destination's dialect."""

from __future__ import annotations

import random
from datetime import datetime

from snaprepl.dialects import DIALECTS
from snaprepl.refresh.staged_entries import _by_batch_and_time, _in_replay_order


def test_entries_come_out_per_batch_in_the_replay_log_s_key_order() -> None:
    rng = random.Random(7)
    times = ["2026-01-01 00:00:02.000000", "2026-01-01 00:00:01.500000", "2026-01-01 00:00:10.000000"]
    rows = [(rng.randrange(3), f"{rng.getrandbits(64):016x}", rng.choice(times)) for _ in range(5000)]
    dest = DIALECTS["sqlite"]
    grouped = _by_batch_and_time(rows)
    batches = {int(batch): _in_replay_order(dest, by_time) for batch, by_time in grouped.items()}
    assert sorted(batches) == [0, 1, 2]
    for batch, entries in batches.items():
        expected = sorted((dest.snaptime_value(ts), guid) for b, guid, ts in rows if b == batch)
        assert [(ts, guid) for guid, ts in entries] == expected
        assert all(isinstance(ts, datetime) for _, ts in entries)
    assert sum(len(e) for e in batches.values()) == len(rows)

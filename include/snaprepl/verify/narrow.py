"""Narrowing differing buckets down to the rows that differ, leaving out keys in flight, and the
repair of those rows (by whichever apply path the copy has)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from snaprepl.verify.canonical import KEY
from snaprepl.verify.compare import Comparison, counted
from snaprepl.verify.model import DIFFERENT, EXTRA, MISSING, VerifyOutcome, VerifyRequest
from snaprepl.verify.ranges import Span


def narrowed(
    request: VerifyRequest,
    comparison: Comparison,
    target: list[Span] | list[int],
    outcome: VerifyOutcome,
    pending: Any,
    repair: Callable[[Any], tuple[int, int]],
) -> VerifyOutcome:
    """The differences in ``target`` (spans of keys, or hash buckets) less the keys of ``pending``
    (None: none in flight), counted and sampled; with ``request.repair`` given to ``repair`` and then compared again."""
    found = comparison.differences(target).persist()
    try:
        differences = found.join(pending, KEY, "left_anti").persist() if pending is not None else found
        excluded = found.count() - differences.count() if pending is not None else 0
        counts, sample = counted(differences)
        total = sum(counts.values())
        outcome = dataclasses.replace(
            outcome, equal=not total, sample=sample, excluded=excluded,
            missing=counts[MISSING], extra=counts[EXTRA], different=counts[DIFFERENT],
        )  # fmt: skip
        if not request.repair or not total:
            return outcome
        upserted, deleted = repair(differences)
        after = comparison.differences(target)
        left = (after.join(pending, KEY, "left_anti") if pending is not None else after).count()
    finally:
        found.unpersist()
    return dataclasses.replace(outcome, equal=left == 0, repaired=True, rows_upserted=upserted, rows_deleted=deleted)

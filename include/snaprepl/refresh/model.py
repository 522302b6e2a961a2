"""What a refresh is asked to do, and what it did."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any

from snaprepl.settings import Settings

INCREMENTAL = "incremental"
COMPLETE = "complete"
#: How a complete refresh copied its rows (RefreshOutcome.copied_by): streamed by the dialects' bulk pipe
#: (PostgreSQL COPY TO piped into COPY FROM), or read by Spark and written by the destination's writer.
COPIED_BY_PIPE = "copy pipe"
COPIED_BY_SPARK = "spark"
MODES = (INCREMENTAL, COMPLETE)


@dataclass(frozen=True)
class RefreshRequest:
    """A refresh to run.

    :param snapshot: SN_NAME of the snapshot.
    :param mode: ``incremental`` or ``complete``.
    :param fallback_complete: when an incremental refresh finds its log entries purged, refresh
        completely instead of failing.
    :param tolerance_minutes: how far before SN_LAST_TS an incremental refresh reads the log.
    :param commit_rows: rows per destination commit (commits never split a SNAPTIME group).
    :param max_partitions: most parallel reads of a complete refresh.
    :param run_id: identifies this run in the catalog's lock.

    The numbers default to :class:`~snaprepl.settings.Settings`' defaults; :meth:`configured` takes
    them from the settings in force. The job's command line is derived from these fields
    (:func:`snaprepl.spark.job_args.job_argv`).
    """

    snapshot: str
    mode: str = INCREMENTAL
    fallback_complete: bool = False
    tolerance_minutes: int = Settings.snp_repl_tolerance_offset
    commit_rows: int = Settings.refresh_commit_rows
    max_partitions: int = Settings.refresh_max_partitions
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"refresh mode must be one of {MODES}, not {self.mode!r}")

    @classmethod
    def configured(
        cls,
        snapshot: str,
        settings: Settings,
        *,
        mode: str = INCREMENTAL,
        fallback_complete: bool = False,
        run_id: str | None = None,
    ) -> RefreshRequest:
        """A refresh of ``snapshot`` with the tolerance, commit size and partitions of ``settings``
        (and ``run_id``, else a new one)."""
        request = cls(
            snapshot=snapshot,
            mode=mode,
            fallback_complete=fallback_complete,
            tolerance_minutes=settings.snp_repl_tolerance_offset,
            commit_rows=settings.refresh_commit_rows,
            max_partitions=settings.refresh_max_partitions,
        )
        return replace(request, run_id=run_id) if run_id else request


@dataclass(frozen=True)
class RefreshOutcome:
    """What a refresh did."""

    snapshot: str
    kind: str
    rows_copied: int = 0
    rows_upserted: int = 0
    rows_deleted: int = 0
    batches: int = 0
    last_ts: datetime | None = None
    duration_s: float = 0.0
    note: str | None = None
    #: How a complete refresh copied its rows: :data:`COPIED_BY_PIPE` or :data:`COPIED_BY_SPARK`.
    copied_by: str | None = None
    #: The copy's lag (s) and the log rows still pending at the end, as the history recorded them
    #: (None: not measured).
    lag_seconds: float | None = None
    backlog: int | None = None
    #: Columns of the source this refresh followed for the first time: added, dropped (kept here) or
    #: widened (:attr:`snaprepl.refresh.columns.ColumnPlan.followed`).
    columns_followed: int = 0

    def __str__(self) -> str:
        if self.kind == COMPLETE:
            text = f"snapshot {self.snapshot}: complete refresh copied {self.rows_copied} rows"
            if self.copied_by == COPIED_BY_PIPE:
                text += " through the COPY pipe"
        else:
            text = (
                f"snapshot {self.snapshot}: incremental refresh applied {self.rows_upserted} upserts and "
                f"{self.rows_deleted} deletes in {self.batches} commits"
            )
        text += f" ({self.duration_s:.1f} s)"
        return f"{text}; {self.note}" if self.note else text

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["last_ts"] = self.last_ts.isoformat() if self.last_ts else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RefreshOutcome:
        values = dict(data)
        values["last_ts"] = datetime.fromisoformat(values["last_ts"]) if values.get("last_ts") else None
        return cls(**values)

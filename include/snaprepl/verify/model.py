"""What a verify is asked to do, and what it found."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from snaprepl.settings import Settings

MISSING = "missing"  # in the source, not in the copy
EXTRA = "extra"  # in the copy only
DIFFERENT = "different"  # in both, with other values
KINDS = (MISSING, EXTRA, DIFFERENT)
#: Keys named in an outcome's sample, at most.
SAMPLE_SIZE = 20


@dataclass(frozen=True)
class VerifyRequest:
    """A verify (and with ``repair`` a repair) of one snapshot.

    :param snapshot: SN_NAME of the snapshot.
    :param repair: apply the source's rows for the keys that differ (never writes the source).
    :param where: a condition in the source's dialect limiting the rows compared (on both sides).
    :param commit_rows: rows per destination commit of a repair.
    :param max_partitions: most parallel reads of each side.
    :param tolerance_minutes: how far before SN_LAST_TS the log's entries may still be in flight.
    :param run_id: identifies this run in the catalog's lock.

    The numbers default to :class:`~snaprepl.settings.Settings`' defaults; :meth:`configured` takes
    them from the settings in force. The job's command line is derived from these fields
    (:func:`snaprepl.spark.job_args.job_argv`).
    """

    snapshot: str
    repair: bool = False
    where: str | None = None
    commit_rows: int = Settings.refresh_commit_rows
    max_partitions: int = Settings.refresh_max_partitions
    tolerance_minutes: int = Settings.snp_repl_tolerance_offset
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @classmethod
    def configured(
        cls, snapshot: str, settings: Settings, *, repair: bool = False, where: str | None = None
    ) -> VerifyRequest:
        """A verify of ``snapshot`` with the commit size, partitions and tolerance of ``settings``."""
        return cls(
            snapshot=snapshot,
            repair=repair,
            where=where,
            commit_rows=settings.refresh_commit_rows,
            max_partitions=settings.refresh_max_partitions,
            tolerance_minutes=settings.snp_repl_tolerance_offset,
        )


@dataclass(frozen=True)
class VerifyOutcome:
    """What a verify found (and a repair did).

    ``missing``, ``extra`` and ``different`` count the differences found (keys with changes still in
    flight excluded, ``excluded`` of them); ``equal`` says whether the copy equals its source at the
    end (after the repair, if one ran); ``sample`` names some differing keys.
    """

    copy: str
    equal: bool
    missing: int = 0
    extra: int = 0
    different: int = 0
    sample: list[dict[str, Any]] = field(default_factory=list)
    rows: int = 0
    seconds: float = 0.0
    excluded: int = 0
    repaired: bool = False
    rows_upserted: int = 0
    rows_deleted: int = 0
    ranges: int = 0
    ranges_differing: int = 0
    #: Rows read again (both sides) to name the differences: only the differing key ranges' when the
    #: key starts with an integer column, else both sides once more.
    rows_narrowed: int = 0
    #: Where the bucket sums were computed: ``databases`` (both sides' SQL) or ``spark``.
    computed_in: str = "spark"

    @property
    def differences(self) -> int:
        return self.missing + self.extra + self.different

    @property
    def exit_code(self) -> int:
        """0 equal (or repaired to equal), 3 differences left."""
        return 0 if self.equal else 3

    def to_json(self) -> dict[str, Any]:
        """The outcome as ``snaprepl verify --json`` prints it."""
        return {
            "copy": self.copy,
            "equal": self.equal,
            "missing": self.missing,
            "extra": self.extra,
            "different": self.different,
            "sample": [{"key": s["key"], "kind": s["kind"]} for s in self.sample],
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerifyOutcome:
        return cls(**data)

    def __str__(self) -> str:
        lines = [self._headline()]
        for entry in self.sample:
            lines.append(f"  {entry['kind']:<9} key {entry['key']}")
        if self.differences > len(self.sample):
            lines.append(f"  ... and {self.differences - len(self.sample)} more")
        return "\n".join(lines)

    def _headline(self) -> str:
        what = f"{self.copy}: {self.rows} rows compared in {self.seconds:.1f} s"
        if self.excluded:
            what += f" ({self.excluded} keys with changes still in flight not counted)"
        if not self.differences:
            return f"{what}: equal"
        found = f"{self.missing} missing, {self.extra} extra, {self.different} different"
        if self.repaired:
            state = "equal now" if self.equal else "still different"
            return f"{what}: {found}; repaired ({self.rows_upserted} upserts, {self.rows_deleted} deletes), {state}"
        return f"{what}: {found}"

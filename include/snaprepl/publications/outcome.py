"""What a publication's sync step reports (:class:`Outcome`), for tables and collections alike, and what the
conflict ledger's decision codes (``CF_DECISION``) mean."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The conflict ledger's decision codes (:class:`snaprepl.bidir.resolvers.Decision`), as people read them.
DECISIONS = {1: "subscriber wins", 2: "subscriber wins (changed)", 3: "publisher wins", 4: "ignored"}


@dataclass
class Outcome:
    """What one sync step did."""

    step: str
    server: str
    changes: int = 0
    applied: int = 0
    conflicts: int = 0
    skipped: int = 0
    rows: int = 0
    duration_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: What the step did in its own words (a collection's: resources copied, deleted, ...), instead of rows.
    summary: str = ""

    def __str__(self) -> str:
        if self.summary:
            head = {"init": "init of", "pull": "pull from"}.get(self.step, "push to")
            text = f"{head} {self.server}: {self.summary}"
        elif self.step == "init":
            text = f"init of {self.server}: {self.rows} rows copied"
        elif self.step == "pull":
            text = (
                f"pull from {self.server}: {self.changes} changes, {self.applied} applied, {self.conflicts} conflicts"
            )
        else:
            text = f"push to {self.server}: {self.changes} changes, {self.applied} applied"
            if self.skipped:
                text += f", {self.skipped} waiting for the subscriber's own changes to be pulled"
        return f"{text} ({self.duration_s:.1f} s)" + "".join(f"; {n}" for n in self.notes)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

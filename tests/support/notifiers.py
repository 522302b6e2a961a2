"""A notifier of the user's own, named by import path in ``[snaprepl] conflict_notifier``."""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseNotifier

RECEIVED: list[dict[str, Any]] = []


class Collecting(BaseNotifier):
    """Keeps the conflicts it is told about."""

    def notify(self, context: Any) -> None:
        RECEIVED.extend(context["conflicts"])

"""Telling owners about losing rows: conflicts of the ledger go to an Airflow notifier.

``[snaprepl] conflict_notifier``: ``log`` (default: a warning per conflict in the task's or the
command's log), ``email`` (the SMTP provider's notifier to ``conflict_email_to`` over connection
``smtp_conn_id``), or the import path ``package.module:Class`` of any Airflow ``BaseNotifier``
(built with no arguments). Notifiers are called with a context whose ``conflicts`` are the ledger's
rows; a conflict is notified once. A collection's conflict is also mailed to the address its
resolver names, with its text (:mod:`snaprepl.publications.owner_mail`). Alerts (failed runs, lag over
``lag_alert_minutes``, see :mod:`snaprepl.submit.alerts`) go to the same notifier, with a context
whose ``alerts`` are lines of text (and ``conflicts`` empty).
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from snaprepl.catalog.store import Catalog
from snaprepl.common.airflow_config import load_airflow_configuration
from snaprepl.errors import InvalidArgument
from snaprepl.publications.outcome import DECISIONS
from snaprepl.publications.owner_mail import mail_owners
from snaprepl.settings import Settings

if TYPE_CHECKING:
    from airflow.sdk import BaseNotifier

log = logging.getLogger("snaprepl.conflicts")
alert_log = logging.getLogger("snaprepl.alerts")
#: Subject and body of the e-mail notifier, for conflicts and for alerts.
_EMAIL = {
    "conflicts": (
        "snaprepl: {{ conflicts | length }} replication conflicts",
        "<ul>{% for c in conflicts %}<li>{{ describe(c) }}</li>{% endfor %}</ul>",
    ),
    "alerts": (
        "snaprepl alert: {{ alerts[0] | truncate(120) }}",
        "<ul>{% for a in alerts %}<li>{{ a }}</li>{% endfor %}</ul>",
    ),
}


def describe(conflict: dict[str, Any]) -> str:
    return (
        f"{conflict['CF_ITEM']}: '{conflict['CF_TYPE']}' conflict on key {conflict['CF_KEY']} from "
        f"{conflict['CF_ORIGIN']}: {DECISIONS.get(conflict['CF_DECISION'], conflict['CF_DECISION'])} "
        f"(by {conflict['CF_RESOLVER']}); losing row: {conflict['CF_LOSER']}"
    )


def _log_notifier() -> BaseNotifier:
    """A notifier that logs every conflict as a warning (Airflow loads only when one is built)."""
    from airflow.sdk import BaseNotifier

    class LogConflictNotifier(BaseNotifier):
        """Logs every conflict as a warning."""

        def notify(self, context: Any) -> None:
            for conflict in context.get("conflicts", []):
                log.warning("%s", describe(conflict))
            for alert in context.get("alerts", []):
                alert_log.warning("%s", alert)

    return LogConflictNotifier()


def build_notifier(settings: Settings, about: str = "conflicts") -> BaseNotifier:
    """The notifier ``[snaprepl] conflict_notifier`` names, for ``conflicts`` or ``alerts``."""
    load_airflow_configuration()  # Airflow loads here for a command line: its logging goes to stderr
    from airflow.sdk import BaseNotifier

    choice = settings.conflict_notifier.strip()
    if choice == "log":
        return _log_notifier()
    if choice == "email":
        from airflow.providers.smtp.notifications.smtp import SmtpNotifier

        if not settings.conflict_email_to:
            raise InvalidArgument("conflict_notifier = email needs [snaprepl] conflict_email_to")
        return SmtpNotifier(
            to=[a.strip() for a in settings.conflict_email_to.split(",") if a.strip()],
            subject=_EMAIL[about][0],
            html_content=_EMAIL[about][1],
            smtp_conn_id=settings.smtp_conn_id,
        )
    module_name, _, name = choice.partition(":")
    try:
        notifier = getattr(importlib.import_module(module_name), name)()
    except (ImportError, AttributeError, TypeError, ValueError) as err:
        raise InvalidArgument(f"conflict notifier {choice!r} cannot be built: {err}") from None
    if not isinstance(notifier, BaseNotifier):
        raise InvalidArgument(f"conflict notifier {choice!r} is not an Airflow BaseNotifier")
    return notifier


def notify_conflicts(catalog: Catalog, settings: Settings, item: str) -> int:
    """Send the ledger's conflicts of publication ``item`` not notified yet; return how many.

    Only ``item``'s: a sync reports (and counts) its own conflicts; another publication's are sent
    by that publication's next sync."""
    conflicts = catalog.conflicts(item, unnotified=True)
    if not conflicts:
        return 0
    notifier = build_notifier(settings)
    notifier({"conflicts": conflicts, "describe": describe})
    mail_owners(conflicts, settings)  # collections: the resolver's notify_email gets notify_text
    catalog.mark_notified([c["CF_ID"] for c in conflicts])
    return len(conflicts)


def notify_alerts(settings: Settings, alerts: list[str]) -> None:
    """Send ``alerts`` (lines of text) to the configured notifier."""
    if alerts:
        build_notifier(settings, "alerts")({"alerts": alerts, "conflicts": [], "describe": describe})

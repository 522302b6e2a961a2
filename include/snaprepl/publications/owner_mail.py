"""Telling a collection's owner about its conflicts: an e-mail to the resolver's notify address.

``REPL_ADD_DAV_CR(collection, class, notify_email, notify_text)`` names who is told about the
conflicts decided under that collection, and what they are told (the seed's ``_notify_email`` and
``_notify_text``); the ledger keeps both in ``CF_LOSER``. When the conflict notifier runs
(:func:`snaprepl.publications.notify.notify_conflicts`), each such address gets one e-mail per notify
text: the text, then each conflict (the resource, the sides, who won and where the losing version
is backed up). Mail goes through the Airflow SMTP connection ``[snaprepl] smtp_conn_id`` (the SMTP
provider's notifier); without that connection the mails are only logged. Nothing secret is in
them: the ledger holds no credentials.
"""

from __future__ import annotations

import html
import json
import logging
from typing import Any

from snaprepl.common.airflow_config import load_airflow_configuration
from snaprepl.connections.lookup import get_connection
from snaprepl.errors import ConnectionNotFound
from snaprepl.settings import Settings

log = logging.getLogger("snaprepl.conflicts")
_WINNER = {1: "the subscriber's version won", 3: "the publisher's version won"}
SUBJECT = "snaprepl: {{ count }} conflict(s) in {{ where }}"
BODY = "{{ body }}"


def _loser(conflict: dict[str, Any]) -> dict[str, Any]:
    try:
        found = json.loads(conflict.get("CF_LOSER") or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def owner_mails(conflicts: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The conflicts to mail, by (address, notify text): those whose resolver named an address."""
    mails: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for conflict in conflicts:
        loser = _loser(conflict)
        address = str(loser.get("notify_email") or "").strip()
        if address:
            mails.setdefault((address, str(loser.get("notify_text") or "")), []).append(conflict)
    return mails


def describe(conflict: dict[str, Any]) -> str:
    """One conflict of a collection, for its owner."""
    loser = _loser(conflict)
    try:
        path = json.loads(conflict["CF_KEY"])["path"]
    except (ValueError, KeyError, TypeError):
        path = conflict["CF_KEY"]
    winner = _WINNER.get(conflict["CF_DECISION"], f"decision {conflict['CF_DECISION']}")
    return (
        f"{path} in {conflict['CF_ITEM']}: changed on {conflict['CF_ORIGIN']} and on the publisher; {winner} "
        f"(by {conflict['CF_RESOLVER']}). The losing version is kept at {loser.get('backup')} "
        f"on server {loser.get('server')}."
    )


def _body(text: str, conflicts: list[dict[str, Any]]) -> str:
    items = "".join(f"<li>{html.escape(describe(c))}</li>" for c in conflicts)
    return (f"<p>{html.escape(text)}</p>" if text else "") + f"<ul>{items}</ul>"


def mail_owners(conflicts: list[dict[str, Any]], settings: Settings) -> int:
    """E-mail the owners named by the conflicts' resolvers; return how many e-mails were sent."""
    mails = owner_mails(conflicts)
    if not mails:
        return 0
    try:
        get_connection(settings.smtp_conn_id)
    except ConnectionNotFound:
        for (address, _), found in mails.items():
            for conflict in found:
                log.warning(
                    "not mailed to %s (no SMTP connection %r): %s", address, settings.smtp_conn_id, describe(conflict)
                )
        return 0
    load_airflow_configuration()
    from airflow.providers.smtp.notifications.smtp import SmtpNotifier

    for (address, text), found in mails.items():
        where = ", ".join(sorted({c["CF_ITEM"] for c in found}))
        notifier = SmtpNotifier(to=[address], subject=SUBJECT, html_content=BODY, smtp_conn_id=settings.smtp_conn_id)
        notifier({"count": len(found), "where": where, "body": _body(text, found)})
    return len(mails)

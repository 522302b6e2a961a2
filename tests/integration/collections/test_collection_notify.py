"""A collection's conflicts are mailed to the address its resolver names (REPL_ADD_DAV_CR's
notify_email), with its notify_text, over a real SMTP server (aiosmtpd on loopback, with a login);
each conflict once, and no password in the mail."""

from __future__ import annotations

import dataclasses
import email
import email.policy
import json
import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from snaprepl import api
from tests.integration.collections.conftest import Sides
from tests.support.collections import put
from tests.support.webdav import PASSWORD as DAV_PASSWORD

SMTP_USER, SMTP_PASSWORD = "mailer", "smtp-Pa55-secret"
COLL = "/mail/c/"
ITEM = f"{COLL}@dav1"


class Inbox:
    """An aiosmtpd handler keeping what it receives, and an authenticator keeping who logged in."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.logins: list[tuple[str, str]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(envelope)
        return "250 OK"

    def authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        if isinstance(data, LoginPassword):
            self.logins.append((data.login.decode(), data.password.decode()))
            return AuthResult(success=(data.login.decode(), data.password.decode()) == (SMTP_USER, SMTP_PASSWORD))
        return AuthResult(success=False)


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    found = Inbox()
    with socket.socket() as probe:  # a free loopback port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(  # AUTH without TLS: loopback only, and the test needs a login to check
        found,
        hostname="127.0.0.1",
        port=port,
        authenticator=found.authenticate,
        auth_required=True,
        auth_require_tls=False,
    )
    controller.start()
    os.environ["AIRFLOW_CONN_COLL_SMTP"] = json.dumps(
        {
            "conn_type": "smtp",
            "host": "127.0.0.1",
            "port": port,
            "login": SMTP_USER,
            "password": SMTP_PASSWORD,
            "extra": {"from_email": "snaprepl@example.com", "disable_tls": True, "disable_ssl": True},
        }
    )
    yield found
    controller.stop()
    os.environ.pop("AIRFLOW_CONN_COLL_SMTP", None)


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_the_resolvers_address_gets_the_conflict_with_its_text(
    sides: Sides, coll_catalog: Any, syncer: Any, settings: Any, inbox: Inbox
) -> None:
    by_mail = dataclasses.replace(settings, smtp_conn_id="coll_smtp")
    put(sides.dav1, COLL, "plan.txt", b"v1")
    put(sides.dav1, COLL, "quiet/q.txt", b"q1")
    api.repl_create_snapshot_pub(ITEM, 1, catalog=coll_catalog)
    server = api.repl_snp_server("dav2", catalog=coll_catalog)
    api.repl_create_snapshot_sub(server, ITEM, 1, catalog=coll_catalog)
    api.repl_init_snapshot(server, ITEM, 1, catalog=coll_catalog, syncer=syncer)
    api.repl_add_dav_cr(ITEM, "pub_wins", "owner@example.org", "Your edit of a shared plan lost.", catalog=coll_catalog)
    api.repl_add_dav_cr(f"{COLL}quiet/@dav1", "pub_wins", catalog=coll_catalog)  # no address: no mail
    for rel in ("plan.txt", "quiet/q.txt"):
        put(sides.dav1, COLL, rel, b"the publisher's edit")
        put(sides.dav2, COLL, rel, b"dav2's edit")

    result = api.repl_update_snapshot(ITEM, 1, catalog=coll_catalog, settings=by_mail, syncer=syncer)

    assert "2 conflicts" in str(result) and result.notified == 2
    [message] = inbox.messages
    assert message.rcpt_tos == ["owner@example.org"]
    assert inbox.logins == [(SMTP_USER, SMTP_PASSWORD)]  # the password served the login, and only that
    mail = email.message_from_bytes(message.content, policy=email.policy.default)
    assert mail["Subject"] == f"snaprepl: 1 conflict(s) in {ITEM}"
    body = mail.get_body(("html", "plain")).get_content()
    assert "Your edit of a shared plan lost." in body
    assert f"plan.txt in {ITEM}: changed on dav2 and on the publisher; the publisher&#x27;s version won" in body
    assert f"kept at {COLL}_SYS_REPL_BACKUP/plan.txt." in body and "on server dav2" in body
    assert "q.txt" not in body
    for secret in (SMTP_PASSWORD, DAV_PASSWORD):
        assert secret.encode() not in message.content
    assert all(c["CF_NOTIFIED"] for c in coll_catalog.conflicts(ITEM))
    again = api.repl_update_snapshot(ITEM, 1, catalog=coll_catalog, settings=by_mail, syncer=syncer)
    assert again.notified == 0 and len(inbox.messages) == 1, "a conflict is mailed once"

"""A real SMTP server (aiosmtpd) that keeps what it receives, as the connection ``test_smtp``."""

from __future__ import annotations

import email
import email.policy
import json
import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller


class Inbox:
    """An aiosmtpd handler keeping what it receives."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    def bodies(self) -> list[str]:
        """Each message's text (its HTML part, else its plain one)."""
        mails = [email.message_from_bytes(m.content, policy=email.policy.default) for m in self.messages]
        return [m.get_body(("html", "plain")).get_content() for m in mails]  # type: ignore[union-attr]

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(envelope)
        return "250 OK"


@pytest.fixture
def smtp_server() -> Iterator[Inbox]:
    inbox = Inbox()
    with socket.socket() as probe:  # a free port (aiosmtpd checks its server by connecting to it)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    os.environ["AIRFLOW_CONN_TEST_SMTP"] = json.dumps(
        {
            "conn_type": "smtp",
            "host": "127.0.0.1",
            "port": port,
            "extra": {"from_email": "snaprepl@example.com", "disable_tls": True, "disable_ssl": True},
        }
    )
    yield inbox
    controller.stop()
    os.environ.pop("AIRFLOW_CONN_TEST_SMTP", None)

"""A sync step's lost connection named by its end (issue 27): the publisher or the subscriber.

Spark's JDBC reads and writes, and the initial load's COPY pipe, fail with a driver's or Java's error
that does not say which server went away. As a refresh does (:mod:`snaprepl.refresh.runner`), the step
then asks both ends whether they still answer, and names the one that does not; if both answer, the
one the failed operation talked to (see :func:`snaprepl.database.errors.lost_between`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from snaprepl.bidir.servers import server_conn
from snaprepl.bidir.state import PublicationState
from snaprepl.connections.lookup import get_connection
from snaprepl.database.errors import is_unnamed_loss, lost_between
from snaprepl.database.sessions import Database
from snaprepl.errors import ConnectionLost, ReplicationError


def naming_losses(state: PublicationState, kind: str, action: Callable[[str], Any]) -> Callable[[str], Any]:
    """``action`` (a ``kind`` step: pull, push or init, given the server), whose lost connections in
    Spark or a pipe are raised as :class:`ConnectionLost` naming their end."""

    def named(server: str) -> Any:
        try:
            return action(server)
        except Exception as err:
            if not is_unnamed_loss(err, ReplicationError):
                raise
            raise step_lost(state, kind, server, err) from err

    return named


def step_lost(state: PublicationState, kind: str, server: str, err: BaseException) -> ConnectionLost:
    """The error of a ``kind`` step with ``server`` that lost a connection it does not name: a pull
    reads the subscriber and writes the publisher; a push and an initial load the other way round."""
    subscriber = Database(get_connection(server_conn(server, catalog=state.catalog)), role=f"subscriber {server}")
    try:
        if kind == "pull":
            return lost_between(err, subscriber, state.publisher.db)
        return lost_between(err, state.publisher.db, subscriber)
    finally:
        subscriber.dispose()

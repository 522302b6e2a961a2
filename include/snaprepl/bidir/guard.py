"""The guards of a publication's logs at each sync step (see :mod:`snaprepl.catalog.log_guard`).

A ``TRUNCATE``, or a trigger missing or disabled, on the publisher's table makes every replica differ
from it unseen; on a subscriber's, that replica. Either way the replica needs a new initial load
(REPL_INIT_SNAPSHOT: it makes the replica equal to the publisher again, keeping the rows with local
changes still to pull), and no pull or push of it runs until then. Then the replica follows the
columns the publisher's table gained, and other changes of its columns are refused
(:mod:`snaprepl.bidir.columns`).
"""

from __future__ import annotations

import logging

from snaprepl.bidir.columns import follow_publisher
from snaprepl.bidir.state import PublicationState
from snaprepl.catalog.log_guard import guard_publication_side
from snaprepl.errors import ReplicationError

log = logging.getLogger(__name__)


def guard_step(state: PublicationState, server: str) -> None:
    """Before a pull from or a push to ``server``: check the publisher's log and the subscriber's (one
    query each), and refuse a replica that needs a new initial load.

    :raises LogBypassed: the check found something now (said in one line naming table and trigger).
    :raises ReplicationError: the replica needed a new initial load already, or the published
        table's columns changed otherwise than by ADD COLUMN.
    """
    publisher = state.publisher
    every = [s.ss_server for s in state.catalog.subscriptions(state.item)]
    with publisher.db.session() as session:
        guard_publication_side(state.catalog, state.item, publisher.log, publisher.dialect, session, every)
    sub = state.subscriber(server)
    try:
        with sub.db.session() as session:
            guard_publication_side(state.catalog, state.item, sub.log, sub.dialect, session, [server])
        needs = state.subscription(server).ss_needs_init
        if needs:
            raise ReplicationError(
                f"server {server}'s replica of {state.item} needs a new initial load: {needs}",
                f"run REPL_INIT_SNAPSHOT('{server}', '{state.item}', 2); it makes the replica equal to the publisher",
            )
        added = follow_publisher(state.item, publisher, sub)  # ADD COLUMN on the publisher
    finally:
        sub.db.dispose()
    if added:
        log.info("%s: columns %s added to %s's replica and filled", state.item, ", ".join(added), server)


def guard_init(state: PublicationState, server: str) -> None:
    """Before REPL_INIT_SNAPSHOT of ``server``: a trigger still missing or disabled on either side fails
    it (the load would be wrong again at once); events found now are settled by the load itself.
    Columns the publisher's table gained are added to the replica and filled first (the load leaves
    rows of the same version alone)."""
    others = [s.ss_server for s in state.catalog.subscriptions(state.item) if s.ss_server != server]
    with state.publisher.db.session() as session:
        guard_publication_side(
            state.catalog, state.item, state.publisher.log, state.publisher.dialect, session, others, settles=server
        )
    sub = state.subscriber(server)
    try:
        with sub.db.session() as session:
            guard_publication_side(state.catalog, state.item, sub.log, sub.dialect, session, [], settles=server)
        follow_publisher(state.item, state.publisher, sub)  # the load keeps rows of the same version
    finally:
        sub.db.dispose()

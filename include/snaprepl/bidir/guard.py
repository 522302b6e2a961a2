"""The guards of a publication's logs at each sync step (see :mod:`snaprepl.catalog.log_guard`).

A ``TRUNCATE``, or a trigger missing or disabled, on the publisher's table makes every replica differ
from it unseen; on a subscriber's, that replica. Either way the replica needs a new initial load
(REPL_INIT_SNAPSHOT: it makes the replica equal to the publisher again, keeping the rows with local
changes still to pull), and no pull or push of it runs until then.
"""

from __future__ import annotations

from snaprepl.bidir.state import PublicationState
from snaprepl.catalog.log_guard import guard_publication_side
from snaprepl.errors import ReplicationError


def guard_step(state: PublicationState, server: str) -> None:
    """Before a pull from or a push to ``server``: check the publisher's log and the subscriber's (one
    query each), and refuse a replica that needs a new initial load.

    :raises LogBypassed: the check found something now (said in one line naming table and trigger).
    :raises ReplicationError: the replica needed a new initial load already.
    """
    publisher = state.publisher
    every = [s.ss_server for s in state.catalog.subscriptions(state.item)]
    with publisher.db.session() as session:
        guard_publication_side(state.catalog, state.item, publisher.log, publisher.dialect, session, every)
    sub = state.subscriber(server)
    try:
        with sub.db.session() as session:
            guard_publication_side(state.catalog, state.item, sub.log, sub.dialect, session, [server])
    finally:
        sub.db.dispose()
    needs = state.subscription(server).ss_needs_init
    if needs:
        raise ReplicationError(
            f"server {server}'s replica of {state.item} needs a new initial load: {needs}",
            f"run REPL_INIT_SNAPSHOT('{server}', '{state.item}', 2); it makes the replica equal to the publisher",
        )


def guard_init(state: PublicationState, server: str) -> None:
    """Before REPL_INIT_SNAPSHOT of ``server``: a trigger still missing or disabled on either side fails
    it (the load would be wrong again at once); events found now are settled by the load itself."""
    others = [s.ss_server for s in state.catalog.subscriptions(state.item) if s.ss_server != server]
    with state.publisher.db.session() as session:
        guard_publication_side(
            state.catalog, state.item, state.publisher.log, state.publisher.dialect, session, others, settles=server
        )
    sub = state.subscriber(server)
    try:
        with sub.db.session() as session:
            guard_publication_side(state.catalog, state.item, sub.log, sub.dialect, session, [], settles=server)
    finally:
        sub.db.dispose()

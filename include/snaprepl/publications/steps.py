"""The steps of one sync job, for tables (:mod:`snaprepl.bidir.job`) and collections
(:mod:`snaprepl.collections.job`) alike, with subscribers independent of each other, and their bookkeeping.

REPL_UPDATE_SNAPSHOT pulls every loaded subscriber in name order, then pushes to each one whose pull
succeeded (a push carries every change pulled before it). A subscriber that fails (unreachable, say)
stops none of the others: every other step still runs, then the job fails with one line per failed
subscriber, naming its step and why. Each step records itself in the history and the subscription's
status (the ``step`` callable does, with :func:`failure_recorded` and :func:`subscription_step`); this records the
publication's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from snaprepl.catalog.records import PublicationRecord, SubscriptionRecord, utcnow
from snaprepl.catalog.run_history import clean_error, record_sync
from snaprepl.catalog.store import Catalog
from snaprepl.errors import ReplicationError, SnapreplError
from snaprepl.publications.outcome import Outcome

#: Runs one step: (kind, server) -> its outcome; records it, and raises if it failed.
Step = Callable[[str, str], Outcome]


def run_steps(catalog: Catalog, item: str, kinds: Sequence[str], servers: Sequence[str], step: Step) -> list[Outcome]:
    """Every step ``kind`` (``pull`` before ``push``) with every server; a server whose step failed
    gets no later step. Raises when any failed: the step's own error when the job had one server
    (a DAG task), else :func:`failed_subscribers`."""
    outcomes: list[Outcome] = []
    failed: dict[str, tuple[str, Exception]] = {}
    try:
        for kind in kinds:
            for server in servers:
                if server in failed:
                    continue
                try:
                    outcomes.append(step(kind, server))
                except Exception as err:
                    failed[server] = (kind, err)
    except BaseException as err:  # interrupted: no later step runs
        _record_failed(catalog, item, err)
        raise
    if failed:
        error = next(iter(failed.values()))[1] if len(servers) == 1 else failed_subscribers(item, failed, servers)
        _record_failed(catalog, item, error)
        raise error
    record_sync_succeeded(catalog, item)
    return outcomes


def failed_subscribers(item: str, failed: dict[str, tuple[str, Exception]], servers: Sequence[str]) -> SnapreplError:
    """One error with a line per failed subscriber: ``<item>: subscriber <s> failed its <step>: <why>``.
    Its class is the steps' own when they all share one (a busy lease stays :class:`SnapshotBusy`), and
    its hint every step's own (each says what to run for its subscriber)."""
    synced = len(servers) - len(failed)
    lines = [
        f"{item}: subscriber {server} failed its {kind} ({synced} of {len(servers)} synced): {_one_line(err)}"
        for server, (kind, err) in sorted(failed.items())
    ]
    kinds = {type(err) for _, err in failed.values()}
    cls = kinds.pop() if len(kinds) == 1 else ReplicationError
    if not issubclass(cls, SnapreplError) or cls.__init__ is not SnapreplError.__init__:
        cls = ReplicationError
    hints = [err.hint for _, err in failed.values() if isinstance(err, SnapreplError) and err.hint]
    return cls("\n".join(lines), "; ".join(dict.fromkeys(hints)) or None)


def _one_line(err: BaseException) -> str:
    return " ".join(clean_error(err).split())


def _record_failed(catalog: Catalog, item: str, err: BaseException) -> None:
    catalog.update_publication(item, sp_last_status="failed", sp_last_error=clean_error(err), sp_last_sync_at=utcnow())


def reinits_detached(publication: PublicationRecord | None, default: bool) -> bool:
    """Whether a detached subscriber of ``publication`` is reloaded at its next sync instead of failing:
    its SP_REINIT_DETACHED (REPL_SET_PUBLICATION_REINIT), else ``default`` (``[snaprepl] reinit_detached``)."""
    own = publication.sp_reinit_detached if publication is not None else None
    return default if own is None else bool(own)


def detached_message(sub: SubscriptionRecord) -> str:
    """The one line a detached subscriber's push fails with (see :mod:`snaprepl.ops.staleness`)."""
    at = sub.ss_detached_at
    when = f"{at:%Y-%m-%d %H:%M:%S} UTC" if at else "earlier"
    return (
        f"subscriber {sub.ss_server} of {sub.ss_item} was detached at {when} (stale: no sync for longer than its "
        f"stale threshold), and the publisher's log was purged past it; it needs "
        f"REPL_INIT_SNAPSHOT('{sub.ss_server}', '{sub.ss_item}', {sub.ss_type}) (or "
        f"REPL_SET_PUBLICATION_REINIT('{sub.ss_item}', {sub.ss_type}, 1) to reload it at its next sync)"
    )


def loaded_servers(catalog: Catalog, item: str) -> list[str]:
    """The subscribers of ``item`` that have loaded it (a whole sync pulls from and pushes to them)."""
    return [s.ss_server for s in catalog.subscriptions(item) if s.ss_init_state == "done"]


def record_step_succeeded(catalog: Catalog, item: str, server: str) -> None:
    """Record that a sync step of ``item`` with ``server`` succeeded."""
    catalog.update_subscription(server, item, ss_last_status="succeeded", ss_last_error=None)


def record_sync_succeeded(catalog: Catalog, item: str) -> None:
    """Record that a sync job of ``item`` succeeded (its latest sync activity)."""
    catalog.update_publication(item, sp_last_status="succeeded", sp_last_error=None, sp_last_sync_at=utcnow())


@contextmanager
def failure_recorded(catalog: Catalog, item: str, kind: str, server: str, started: datetime) -> Iterator[None]:
    """The body of step ``kind`` with ``server``: if it fails, the step's run goes into the history as failed
    (its error as one clean line); the caller records a run that ends well with what it moved."""
    try:
        yield
    except BaseException as err:
        record_sync(catalog, item, kind, server, started, "failed", rh_error=clean_error(err))
        raise


def subscription_step(catalog: Catalog, item: str, server: str, step: Callable[[], Outcome]) -> Outcome:
    """``step()``, its end in the subscription's status: succeeded, or failed with its error as one clean line."""
    try:
        outcome = step()
    except BaseException as err:
        catalog.update_subscription(server, item, ss_last_status="failed", ss_last_error=clean_error(err))
        raise
    record_step_succeeded(catalog, item, server)
    return outcome


def planned_steps(catalog: Catalog, item: str, action: str, server: str | None) -> list[tuple[str, str]] | None:
    """A sync job's steps as (step, server), for deciding before the job whether it has anything to do;
    None for an action left to the job (an init, a pull or push without its subscriber)."""
    if action in {"pull", "push"}:
        return [(action, server)] if server else None
    if action == "sync":
        loaded = loaded_servers(catalog, item)
        return [("pull", s) for s in loaded] + [("push", s) for s in loaded]
    return None


def is_detached(catalog: Catalog, item: str, server: str) -> bool:
    """Whether subscriber ``server`` of ``item`` is detached (its next step reloads it or fails)."""
    sub = catalog.subscription(server, item)
    return sub is not None and sub.ss_detached_at is not None

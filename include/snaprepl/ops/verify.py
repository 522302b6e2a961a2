"""``VERIFY SNAPSHOT`` and ``REPAIR SNAPSHOT``: find the snapshot, build the request, run the job."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from snaprepl.catalog.lookup import find_snapshot
from snaprepl.catalog.store import Catalog
from snaprepl.common.schedules import validate_schedule
from snaprepl.common.table_names import TableRef
from snaprepl.errors import InvalidArgument, SnapshotNotFound
from snaprepl.settings import Settings
from snaprepl.submit.verify import submit_verify
from snaprepl.verify.model import VerifyOutcome, VerifyRequest
from snaprepl.verify.replicas import find_replica

#: Runs a verify: the Spark job by default (tests run it in their own SparkSession).
Verifier = Callable[[VerifyRequest, Catalog, Settings], VerifyOutcome]


def verify_snapshot(
    name: TableRef,
    *,
    repair: bool = False,
    where: str | None = None,
    catalog: Catalog,
    settings: Settings,
    verifier: Verifier = submit_verify,
) -> VerifyOutcome:
    """Compare snapshot ``name`` with its query evaluated at the source now (rows matching ``where``
    only, when given); with ``repair`` apply the source's rows for the keys that differ."""
    copy = _copy_name(catalog, name)
    if where is not None and not where.strip():
        raise InvalidArgument("the --where condition is empty", "give a condition, or leave the option out")
    request = VerifyRequest.configured(copy, settings, repair=repair, where=where.strip() if where else None)
    return verifier(request, catalog, settings)


def _copy_name(catalog: Catalog, name: TableRef) -> str:
    """The snapshot's SN_NAME, or the name of the subscriber's replica ``name`` names."""
    try:
        return find_snapshot(catalog, name).sn_name
    except SnapshotNotFound:
        replica = find_replica(catalog, str(name))
        if replica is None:
            raise SnapshotNotFound(
                f"there is no snapshot or replica {name}", "`snaprepl status` lists snapshots and replicas"
            ) from None
        return replica.name


@dataclass(frozen=True)
class VerifySchedule:
    snapshot: str
    schedule: str | None

    def __str__(self) -> str:
        if self.schedule is None:
            return f"snapshot {self.snapshot} has no verify schedule"
        return f"snapshot {self.snapshot} is verified on schedule {self.schedule!r} (DAG of its own)"


def set_verify_schedule(name: TableRef, schedule: str | None, *, catalog: Catalog) -> VerifySchedule:
    """The schedule of the snapshot's verify DAG (None: no verify DAG, the default)."""
    record = find_snapshot(catalog, name)
    value = validate_schedule(schedule)
    catalog.update_snapshot(record.sn_name, sn_verify_schedule=value)
    return VerifySchedule(record.sn_name, value)


@dataclass(frozen=True)
class PublicationVerifySchedule:
    item: str
    schedule: str | None

    def __str__(self) -> str:
        if self.schedule is None:
            return f"publication {self.item} has no verify schedule"
        return f"the replicas of publication {self.item} are verified on schedule {self.schedule!r} (DAG of its own)"


def set_publication_verify_schedule(item: str, schedule: str | None, *, catalog: Catalog) -> PublicationVerifySchedule:
    """The schedule of the verify DAG of publication ``item``'s replicas (its SP_ITEM; None: none, the
    default)."""
    value = validate_schedule(schedule)
    catalog.update_publication(item, sp_verify_schedule=value)
    return PublicationVerifySchedule(item, value)

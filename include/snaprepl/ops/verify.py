"""``VERIFY SNAPSHOT`` and ``REPAIR SNAPSHOT``: find the snapshot, build the request, run the job."""

from __future__ import annotations

from collections.abc import Callable

from snaprepl.catalog.store import Catalog
from snaprepl.errors import InvalidArgument
from snaprepl.lookup import find_snapshot
from snaprepl.names import TableRef
from snaprepl.settings import Settings
from snaprepl.submit.verify import submit_verify
from snaprepl.verify.model import VerifyOutcome, VerifyRequest

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
    record = find_snapshot(catalog, name)
    if where is not None and not where.strip():
        raise InvalidArgument("the --where condition is empty", "give a condition, or leave the option out")
    request = VerifyRequest(
        snapshot=record.sn_name,
        repair=repair,
        where=where.strip() if where else None,
        commit_rows=settings.refresh_commit_rows,
        tolerance_minutes=settings.snp_repl_tolerance_offset,
    )
    return verifier(request, catalog, settings)

"""Running sync jobs: spark-submit of ``spark_jobs/sync_publication.py``, as the Airflow tasks do."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from snaprepl.bidir.servers import server_conn
from snaprepl.bidir.sync import Outcome
from snaprepl.catalog.store import Catalog
from snaprepl.connections import ConnectionInfo, get_connection
from snaprepl.errors import ReplicationError
from snaprepl.settings import Settings
from snaprepl.submit.refresh import catalog_connection_of

#: Runs one sync job: (action, item, server or None, rows_per_commit, catalog, settings) -> outcomes.
Syncer = Callable[[str, str, "str | None", int, Catalog, Settings], list[Outcome]]


def sync_arguments(
    action: str, item: str, server: str | None, rows_per_commit: int, settings: Settings, run_id: str
) -> list[str]:
    args = [
        "--item", item, "--action", action, "--rows-per-commit", str(rows_per_commit),
        "--tolerance-minutes", str(settings.snp_repl_tolerance_offset),
        "--commit-rows", str(settings.refresh_commit_rows),
        "--catalog-conn", settings.catalog_conn_id, "--run-id", run_id,
    ]  # fmt: skip
    return [*args, "--server", server] if server else args


def sync_connections(catalog: Catalog, settings: Settings, item: str, server: str | None) -> list[ConnectionInfo]:
    """The connections a sync job of ``item`` needs: the catalog, the publisher, the subscriber(s)."""
    publication = catalog.publication(item)
    if publication is None:
        raise ReplicationError(f"there is no publication {item}")
    servers = [server] if server else [s.ss_server for s in catalog.subscriptions(item)]
    conn_ids = [
        server_conn(publication.sp_server, catalog=catalog),
        *(server_conn(s, catalog=catalog) for s in servers),
    ]
    return [catalog_connection_of(catalog, settings), *(get_connection(c) for c in dict.fromkeys(conn_ids))]


def submit_sync(
    action: str, item: str, server: str | None, rows_per_commit: int, catalog: Catalog, settings: Settings
) -> list[Outcome]:
    from snaprepl.bidir import job
    from snaprepl.submit.submission import prepare, run_submission

    run_id = uuid.uuid4().hex
    submission = prepare(
        job="sync_publication",
        module_file=Path(job.__file__),
        args=sync_arguments(action, item, server, rows_per_commit, settings, run_id),
        connections=sync_connections(catalog, settings, item, server),
        settings=settings,
        run_id=run_id,
        name=f"snaprepl-sync-{action}-{run_id[:8]}",
    )
    try:
        result = run_submission(submission)
    finally:
        submission.cleanup()
    return [Outcome(**o) for o in result["outcomes"]]

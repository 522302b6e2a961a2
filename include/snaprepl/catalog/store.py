"""Reading and writing the SYS_* catalog.

:class:`Catalog` is the only code that touches the catalog tables; each of its parts (snapshot logs,
snapshots, leases, publications, update replay log, conflicts, run history, collection manifests,
resources waiting on locks, the watchdog's conditions, snapshot groups)
lives in a module of its own. Where the catalog database is: the Airflow
connection ``[snaprepl] catalog_conn_id`` when defined, else the Airflow metadata database (see
:mod:`snaprepl.catalog.location`).
"""

from __future__ import annotations

import threading

from snaprepl.catalog.conflicts import Conflicts
from snaprepl.catalog.dav_waiting import DavWaiting
from snaprepl.catalog.groups import Groups
from snaprepl.catalog.history import History
from snaprepl.catalog.leases import Leases
from snaprepl.catalog.location import catalog_connection
from snaprepl.catalog.logs import SnapshotLogs
from snaprepl.catalog.manifests import Manifests
from snaprepl.catalog.publications import Publications
from snaprepl.catalog.snapshots import Snapshots
from snaprepl.catalog.update_replay import UpdateReplayLog
from snaprepl.catalog.watchdog import Watchdog
from snaprepl.connections.lookup import ConnectionInfo
from snaprepl.database.sessions import create_engine
from snaprepl.settings import Settings


class Catalog(
    SnapshotLogs,
    Snapshots,
    Leases,
    Publications,
    UpdateReplayLog,
    Conflicts,
    History,
    Manifests,
    DavWaiting,
    Watchdog,
    Groups,
):
    """The SYS_* catalog in one database.

    :param engine: a SQLAlchemy engine on the catalog database.
    :param connection: the connection it was made from (handed to Spark jobs).
    """

    @classmethod
    def from_connection(cls, conn: ConnectionInfo) -> Catalog:
        return cls(create_engine(conn.extra.get("sqlalchemy_url") or conn.sqlalchemy_url()), conn)

    @classmethod
    def open(cls, settings: Settings) -> Catalog:
        """The catalog this process uses (shared per process), where ``settings`` say it is."""
        with _OPEN_LOCK:
            global _OPEN
            if _OPEN is None:
                _OPEN = cls.from_connection(catalog_connection(settings))
            return _OPEN


_OPEN: Catalog | None = None
_OPEN_LOCK = threading.Lock()


def reset_open_catalog() -> None:
    """Forget the shared catalog (tests switch catalogs)."""
    global _OPEN
    with _OPEN_LOCK:
        if _OPEN is not None:
            _OPEN.dispose()
        _OPEN = None

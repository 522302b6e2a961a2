"""The catalog database: reaching it, checking its revision, and reading and writing records.

Every part of :class:`snaprepl.catalog.store.Catalog` (logs, snapshots, leases, ...) builds on
:class:`CatalogDatabase`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, ProgrammingError

from snaprepl.catalog.migrate import current_revision, head_revision
from snaprepl.catalog.records import R, Record
from snaprepl.connections.lookup import ConnectionInfo
from snaprepl.database.errors import is_connection_lost, reason
from snaprepl.errors import CatalogConnectionLost, CatalogUnavailable, SnapreplError


def column_values(values: dict[str, Any]) -> dict[str, Any]:
    """Column values from keyword names that are a record's field names (the columns in lower case)."""
    return {k.upper(): v for k, v in values.items()}


class CatalogDatabase:
    """The SYS_* catalog in one database.

    :param engine: a SQLAlchemy engine on the catalog database.
    :param connection: the connection it was made from (handed to Spark jobs).
    """

    def __init__(self, engine: sa.Engine, connection: ConnectionInfo | None = None) -> None:
        self.engine = engine
        self.connection = connection
        self._checked = False

    def describe(self) -> str:
        url = self.engine.url
        where = url.database if url.get_backend_name() == "sqlite" else f"{url.host}:{url.port}/{url.database}"
        return f"{url.get_backend_name()} database {where}"

    def ensure_ready(self) -> None:
        """Check the catalog tables exist at the newest revision.

        :raises CatalogUnavailable: saying how to migrate.
        """
        if self._checked:
            return
        try:
            with self.engine.connect() as conn:
                revision = current_revision(conn)
        except (OperationalError, ProgrammingError) as err:
            raise CatalogUnavailable(
                f"cannot reach the snaprepl catalog ({self.describe()}): {str(err.orig).splitlines()[0]}",
                "check the catalog connection",
            ) from None
        if revision != head_revision():
            raise CatalogUnavailable(
                f"the snaprepl catalog in {self.describe()} is at revision {revision or 'none'}, not {head_revision()}",
                "run `airflow db migrate` (with snaprepl in [database] external_db_managers) "
                "or `snaprepl catalog upgrade`",
            )
        self._checked = True

    @contextmanager
    def begin(self) -> Iterator[sa.Connection]:
        """One catalog transaction; a catalog that went away says so in one line, naming the catalog."""
        self.ensure_ready()
        with self.connection_lost_said(), self.engine.begin() as conn:
            yield conn

    @property
    def holds_open_writes(self) -> bool:
        """Whether a write transaction may stay open for seconds beside other writers (row locks);
        SQLite locks the whole file, so its catalog's leases could not be renewed meanwhile."""
        return self.engine.dialect.name != "sqlite"

    @contextmanager
    def connection_lost_said(self) -> Iterator[None]:
        """A lost connection to the catalog raised as :class:`CatalogConnectionLost`, in one line."""
        try:
            yield
        except DBAPIError as err:
            if not (isinstance(err, OperationalError) or err.connection_invalidated) or not is_connection_lost(err):
                raise
            raise CatalogConnectionLost(
                f"lost the connection to the snaprepl catalog ({self.describe()}): {reason(err)}",
                "the catalog's server stopped or cut the connection; run again once it is back (Airflow "
                "retries the task)",
            ) from None

    def dispose(self) -> None:
        self.engine.dispose()

    def _all(self, record: type[R], *where: Any, order_by: Sequence[Any] = ()) -> list[R]:
        with self.begin() as conn:
            rows = conn.execute(sa.select(record.table).where(*where).order_by(*order_by)).fetchall()
        return [record.from_row(r) for r in rows]

    def _one(self, record: type[R], *where: Any) -> R | None:
        found = self._all(record, *where)
        return found[0] if found else None

    def _insert(self, item: Record, duplicate: SnapreplError) -> None:
        try:
            with self.begin() as conn:
                conn.execute(sa.insert(item.table).values(**item.to_values()))
        except IntegrityError:
            raise duplicate from None

"""Reading and writing the SYS_* catalog.

:class:`Catalog` is the only code that touches the catalog tables. Where the catalog database is:
the Airflow connection ``[snaprepl] catalog_conn_id`` when defined, else the Airflow metadata
database (see :class:`snaprepl.settings.Settings`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from snaprepl.catalog import models as m
from snaprepl.catalog.migrate import current_revision, head_revision
from snaprepl.connections import ConnectionInfo, get_connection
from snaprepl.db import create_engine
from snaprepl.dialects import LogObjects
from snaprepl.errors import CatalogUnavailable, ConnectionNotFound, SnapreplError
from snaprepl.settings import Settings


def utcnow() -> datetime:
    """Now, as the naive UTC time the catalog stores."""
    return datetime.now(UTC).replace(tzinfo=None)


R = TypeVar("R", bound="_Record")


@dataclass(frozen=True)
class _Record:
    """A catalog row as a dataclass; fields are named like the table's columns, in lower case."""

    table: ClassVar[sa.Table]

    @classmethod
    def from_row(cls: type[R], row: sa.Row[Any]) -> R:
        mapping = row._mapping
        return cls(**{f.name: mapping[f.name.upper()] for f in fields(cls)})

    def to_values(self) -> dict[str, Any]:
        return {f.name.upper(): getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class LogRecord(_Record):
    """A SYS_SNAPSHOT_LOG row: one snapshot log."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT_LOG

    snl_source: str
    snl_rlog: str
    snl_rplog: str
    snl_conn: str
    snl_schema: str
    snl_table: str
    snl_dialect: str
    snl_key_columns: str
    snl_objects: str
    snl_kind: str
    snl_created_at: datetime
    snl_purged_before: datetime | None = None
    snl_last_purge_at: datetime | None = None

    @property
    def key_columns(self) -> list[str]:
        return json.loads(self.snl_key_columns)

    @property
    def objects(self) -> LogObjects:
        return LogObjects.from_json(self.snl_objects)


@dataclass(frozen=True)
class SnapshotRecord(_Record):
    """A SYS_SNAPSHOT row: one snapshot."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT

    sn_name: str
    sn_query: str
    sn_source_conn: str
    sn_dest_conn: str
    sn_dest_schema: str
    sn_dest_table: str
    sn_created_at: datetime
    sn_last_ts: datetime | None = None
    sn_is_incremental: int | None = None
    sn_source_table: str | None = None
    sn_last_upd_bm: str | None = None
    sn_columns: str | None = None
    sn_condition: str | None = None
    sn_key_columns: str | None = None
    sn_schedule: str | None = None
    sn_tolerance_min: int | None = None
    sn_needs_complete: str | None = None
    sn_last_refresh_at: datetime | None = None
    sn_last_refresh_kind: str | None = None
    sn_last_status: str | None = None
    sn_last_error: str | None = None
    sn_last_rows_upserted: int | None = None
    sn_last_rows_deleted: int | None = None
    sn_last_rows_copied: int | None = None
    sn_last_duration_s: float | None = None
    sn_run_id: str | None = None
    sn_run_holder: str | None = None
    sn_run_heartbeat: datetime | None = None

    @property
    def incremental(self) -> bool:
        return self.sn_is_incremental is not None

    @property
    def key_columns(self) -> list[str]:
        return json.loads(self.sn_key_columns) if self.sn_key_columns else []

    @property
    def columns(self) -> list[str] | None:
        return json.loads(self.sn_columns) if self.sn_columns else None


def connection_from_url(url: str, conn_id: str) -> ConnectionInfo:
    """A :class:`ConnectionInfo` for a SQLAlchemy URL (the metadata database's)."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    conn_type = {"postgresql": "postgres", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite"}.get(backend)
    if conn_type is None:
        raise CatalogUnavailable(f"the catalog cannot live in a {backend} database")
    return ConnectionInfo(
        conn_id=conn_id,
        conn_type=conn_type,
        host=parsed.host,
        port=parsed.port,
        login=parsed.username,
        password=parsed.password,
        schema=parsed.database,
        extra={"sqlalchemy_url": parsed.render_as_string(hide_password=False)},
    )


def metadata_database_url() -> str | None:
    """The Airflow metadata database's URL, or ``None`` where Airflow hides it (tasks, DAG parsing)."""
    try:
        from airflow.configuration import conf
    except ImportError:
        return None
    url = conf.get("database", "sql_alchemy_conn", fallback=None)
    if not url or url.startswith("airflow-db-not-allowed"):
        return None
    return url


def catalog_connection(settings: Settings) -> ConnectionInfo:
    """Where the catalog lives: the catalog connection if defined, else the metadata database."""
    try:
        return get_connection(settings.catalog_conn_id)
    except ConnectionNotFound:
        pass
    url = metadata_database_url()
    if url is None:
        raise CatalogUnavailable(
            f"the snaprepl catalog is not reachable from this process: connection '{settings.catalog_conn_id}' "
            "is not defined and Airflow hides its metadata database from tasks and DAG parsing",
            f"define connection '{settings.catalog_conn_id}' pointing at the metadata database, e.g. "
            f"AIRFLOW_CONN_{settings.catalog_conn_id.upper()}=<the value of sql_alchemy_conn>",
        )
    return connection_from_url(url, settings.catalog_conn_id)


class Catalog:
    """The SYS_* catalog in one database.

    :param engine: a SQLAlchemy engine on the catalog database.
    :param connection: the connection it was made from (handed to Spark jobs).
    """

    def __init__(self, engine: sa.Engine, connection: ConnectionInfo | None = None) -> None:
        self.engine = engine
        self.connection = connection
        self._checked = False

    # ------------------------------------------------------------------ opening

    @classmethod
    def from_connection(cls, conn: ConnectionInfo) -> Catalog:
        return cls(create_engine(conn.extra.get("sqlalchemy_url") or conn.sqlalchemy_url()), conn)

    @classmethod
    def open(cls, settings: Settings | None = None) -> Catalog:
        """The catalog this process uses (shared per process)."""
        with _OPEN_LOCK:
            global _OPEN
            if _OPEN is None:
                _OPEN = cls.from_connection(catalog_connection(settings or Settings.load()))
            return _OPEN

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
        self.ensure_ready()
        with self.engine.begin() as conn:
            yield conn

    def dispose(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ generic record access

    def _all(self, record: type[R], *where: Any, order_by: Sequence[Any] = ()) -> list[R]:
        with self.begin() as conn:
            rows = conn.execute(sa.select(record.table).where(*where).order_by(*order_by)).fetchall()
        return [record.from_row(r) for r in rows]

    def _one(self, record: type[R], *where: Any) -> R | None:
        found = self._all(record, *where)
        return found[0] if found else None

    def _insert(self, item: _Record, duplicate: SnapreplError) -> None:
        try:
            with self.begin() as conn:
                conn.execute(sa.insert(item.table).values(**item.to_values()))
        except IntegrityError:
            raise duplicate from None

    # ------------------------------------------------------------------ snapshot logs

    def logs(self) -> list[LogRecord]:
        return self._all(LogRecord, order_by=[m.SYS_SNAPSHOT_LOG.c.SNL_SOURCE])

    def log(self, source_key: str) -> LogRecord | None:
        return self._one(LogRecord, source_key == m.SYS_SNAPSHOT_LOG.c.SNL_SOURCE)

    def logs_named(self, conn_id: str, table: str, schema: str | None = None) -> list[LogRecord]:
        """Logs of tables called ``table`` (in ``schema`` if given) on connection ``conn_id``."""
        t = m.SYS_SNAPSHOT_LOG.c
        where = [conn_id == t.SNL_CONN, table == t.SNL_TABLE]
        if schema is not None:
            where.append(schema == t.SNL_SCHEMA)
        return self._all(LogRecord, *where)

    def add_log(self, record: LogRecord, duplicate: SnapreplError) -> None:
        self._insert(record, duplicate)

    def delete_log(self, source_key: str) -> None:
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_SNAPSHOT_LOG).where(source_key == m.SYS_SNAPSHOT_LOG.c.SNL_SOURCE))

    def record_log_purge(self, source_key: str, purged_before: datetime | None) -> None:
        """Record a purge; the watermark only moves forward."""
        t = m.SYS_SNAPSHOT_LOG.c
        with self.begin() as conn:
            values: dict[str, Any] = {"SNL_LAST_PURGE_AT": utcnow()}
            if purged_before is not None:
                current = conn.execute(sa.select(t.SNL_PURGED_BEFORE).where(source_key == t.SNL_SOURCE)).scalar()
                if current is None or purged_before > current:
                    values["SNL_PURGED_BEFORE"] = purged_before
            conn.execute(sa.update(m.SYS_SNAPSHOT_LOG).where(source_key == t.SNL_SOURCE).values(**values))

    # ------------------------------------------------------------------ snapshots

    def snapshots(self) -> list[SnapshotRecord]:
        return self._all(SnapshotRecord, order_by=[m.SYS_SNAPSHOT.c.SN_NAME])

    def snapshot(self, name: str) -> SnapshotRecord | None:
        return self._one(SnapshotRecord, name == m.SYS_SNAPSHOT.c.SN_NAME)

    def snapshots_named(self, conn_id: str, table: str, schema: str | None = None) -> list[SnapshotRecord]:
        t = m.SYS_SNAPSHOT.c
        where = [conn_id == t.SN_DEST_CONN, table == t.SN_DEST_TABLE]
        if schema is not None:
            where.append(schema == t.SN_DEST_SCHEMA)
        return self._all(SnapshotRecord, *where)

    def snapshots_of_log(self, source_key: str) -> list[SnapshotRecord]:
        return self._all(SnapshotRecord, source_key == m.SYS_SNAPSHOT.c.SN_SOURCE_TABLE)

    def add_snapshot(self, record: SnapshotRecord, duplicate: SnapreplError) -> None:
        self._insert(record, duplicate)

    def update_snapshot(self, name: str, **values: Any) -> None:
        """Set columns of one snapshot; keyword names are the record's field names."""
        with self.begin() as conn:
            conn.execute(
                sa.update(m.SYS_SNAPSHOT)
                .where(name == m.SYS_SNAPSHOT.c.SN_NAME)
                .values(**{k.upper(): v for k, v in values.items()})
            )

    # ------------------------------------------------------------------ refresh bookkeeping

    def take_run_lock(self, name: str, *, expected: str | None, run_id: str, holder: str) -> bool:
        """Compare-and-set the snapshot's run lock from ``expected`` to ``run_id``."""
        t = m.SYS_SNAPSHOT.c
        current = t.SN_RUN_ID.is_(None) if expected is None else expected == t.SN_RUN_ID
        with self.begin() as conn:
            result = conn.execute(
                sa.update(m.SYS_SNAPSHOT)
                .where(name == t.SN_NAME, current)
                .values(SN_RUN_ID=run_id, SN_RUN_HOLDER=holder, SN_RUN_HEARTBEAT=utcnow())
            )
        return result.rowcount == 1

    def heartbeat_run_lock(self, name: str, run_id: str) -> None:
        t = m.SYS_SNAPSHOT.c
        with self.begin() as conn:
            conn.execute(
                sa.update(m.SYS_SNAPSHOT)
                .where(name == t.SN_NAME, run_id == t.SN_RUN_ID)
                .values(SN_RUN_HEARTBEAT=utcnow())
            )

    def release_run_lock(self, name: str, run_id: str) -> None:
        t = m.SYS_SNAPSHOT.c
        with self.begin() as conn:
            conn.execute(
                sa.update(m.SYS_SNAPSHOT)
                .where(name == t.SN_NAME, run_id == t.SN_RUN_ID)
                .values(SN_RUN_ID=None, SN_RUN_HOLDER=None, SN_RUN_HEARTBEAT=None)
            )

    def replayed_since(self, name: str, since: datetime | None) -> list[str]:
        """RLOG_ROWGUIDs already applied to snapshot ``name`` with SNAPTIME at or after ``since``."""
        t = m.SYS_RPLOG.c
        query = sa.select(t.RLOG_ROWGUID).where(name == t.TARGET)
        if since is not None:
            query = query.where(since <= t.SNAPTIME)
        with self.begin() as conn:
            return [row[0] for row in conn.execute(query)]

    def record_applied(self, name: str, entries: Sequence[tuple[str, datetime]], last_ts: datetime | None) -> None:
        """Record log entries applied to ``name`` and move SN_LAST_TS forward to ``last_ts``, atomically."""
        t = m.SYS_SNAPSHOT.c
        with self.begin() as conn:
            if entries:
                conn.execute(
                    sa.insert(m.SYS_RPLOG),
                    [{"TARGET": name, "RLOG_ROWGUID": guid, "SNAPTIME": ts} for guid, ts in entries],
                )
            if last_ts is not None:
                conn.execute(
                    sa.update(m.SYS_SNAPSHOT)
                    .where(name == t.SN_NAME, sa.or_(t.SN_LAST_TS.is_(None), last_ts > t.SN_LAST_TS))
                    .values(SN_LAST_TS=last_ts, SN_RUN_HEARTBEAT=utcnow())
                )

    def record_complete(self, name: str, last_ts: datetime | None) -> None:
        """After a complete refresh: SN_LAST_TS is the high-water mark taken before the copy; the replay
        log of the old content no longer describes the destination."""
        with self.begin() as conn:
            conn.execute(
                sa.update(m.SYS_SNAPSHOT)
                .where(name == m.SYS_SNAPSHOT.c.SN_NAME)
                .values(SN_LAST_TS=last_ts, SN_NEEDS_COMPLETE=None, SN_LAST_UPD_BM=None)
            )
            conn.execute(sa.delete(m.SYS_RPLOG).where(name == m.SYS_RPLOG.c.TARGET))

    def purge_replay_log(self, name: str, before: datetime) -> int:
        """Delete replay-log entries of ``name`` older than ``before``."""
        t = m.SYS_RPLOG.c
        with self.begin() as conn:
            return conn.execute(sa.delete(m.SYS_RPLOG).where(name == t.TARGET, before > t.SNAPTIME)).rowcount

    def replay_log_size(self, name: str) -> int:
        with self.begin() as conn:
            return conn.execute(
                sa.select(sa.func.count()).select_from(m.SYS_RPLOG).where(name == m.SYS_RPLOG.c.TARGET)
            ).scalar_one()

    def delete_snapshot(self, name: str) -> None:
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_SNAPSHOT).where(name == m.SYS_SNAPSHOT.c.SN_NAME))
            conn.execute(sa.delete(m.SYS_RPLOG).where(name == m.SYS_RPLOG.c.TARGET))


_OPEN: Catalog | None = None
_OPEN_LOCK = threading.Lock()


def reset_open_catalog() -> None:
    """Forget the shared catalog (tests switch catalogs)."""
    global _OPEN
    with _OPEN_LOCK:
        if _OPEN is not None:
            _OPEN.dispose()
        _OPEN = None


__all__ = [
    "Catalog",
    "LogRecord",
    "SnapshotRecord",
    "catalog_connection",
    "connection_from_url",
    "metadata_database_url",
    "utcnow",
]

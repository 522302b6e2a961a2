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

from snaprepl.catalog import lease_log
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
    sn_complete_ts: datetime | None = None
    sn_last_refresh_at: datetime | None = None
    sn_last_refresh_kind: str | None = None
    sn_last_status: str | None = None
    sn_last_error: str | None = None
    sn_last_rows_upserted: int | None = None
    sn_last_rows_deleted: int | None = None
    sn_last_rows_copied: int | None = None
    sn_last_duration_s: float | None = None

    @property
    def incremental(self) -> bool:
        return self.sn_is_incremental is not None

    @property
    def key_columns(self) -> list[str]:
        return json.loads(self.sn_key_columns) if self.sn_key_columns else []

    @property
    def columns(self) -> list[str] | None:
        return json.loads(self.sn_columns) if self.sn_columns else None


@dataclass(frozen=True)
class ServerRecord(_Record):
    """A SYS_SERVERS row: a replication server (its unique name and its connection)."""

    table: ClassVar[sa.Table] = m.SYS_SERVERS

    server: str
    db_address: str
    created_at: datetime


@dataclass(frozen=True)
class PublicationRecord(_Record):
    """A SYS_SNAPSHOT_PUB row: a published table."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT_PUB

    sp_item: str
    sp_type: int
    sp_server: str
    sp_created_at: datetime
    sp_last_ts: datetime | None = None
    sp_schedule: str | None = None
    sp_last_sync_at: datetime | None = None
    sp_rows_per_commit: int | None = None
    sp_last_status: str | None = None
    sp_last_error: str | None = None


@dataclass(frozen=True)
class SubscriptionRecord(_Record):
    """A SYS_SNAPSHOT_SUB row: one subscriber's replica of a publication."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT_SUB

    ss_server: str
    ss_item: str
    ss_type: int
    ss_created_at: datetime
    ss_schema: str | None = None
    ss_table: str | None = None
    ss_last_pull_ts: datetime | None = None
    ss_last_push_ts: datetime | None = None
    ss_init_state: str | None = None
    ss_init_bm: str | None = None
    ss_last_pull_at: datetime | None = None
    ss_last_push_at: datetime | None = None
    ss_last_status: str | None = None
    ss_last_error: str | None = None


@dataclass(frozen=True)
class ResolverRecord(_Record):
    """A SYS_SNAPSHOT_CR row: one conflict resolver of a published table."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT_CR

    cr_id: int | None
    cr_table_name: str
    cr_type: str
    cr_proc: str
    cr_order: int
    cr_class: str | None = None
    cr_column: str | None = None
    cr_suffix: str | None = None


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

    def lock_holder(self, name: str) -> tuple[str, str, datetime] | None:
        """(run id, holder, heartbeat) of lock ``name``, if held."""
        t = m.SYS_REPL_LOCK.c
        with self.begin() as conn:
            row = conn.execute(sa.select(t.RUN_ID, t.HOLDER, t.HEARTBEAT).where(t.LOCK_NAME == name)).first()
        return (row[0], row[1], row[2]) if row else None

    def locks(self) -> dict[str, tuple[str, str, datetime]]:
        t = m.SYS_REPL_LOCK.c
        with self.begin() as conn:
            return {
                r[0]: (r[1], r[2], r[3]) for r in conn.execute(sa.select(t.LOCK_NAME, t.RUN_ID, t.HOLDER, t.HEARTBEAT))
            }

    def take_lock(self, name: str, *, expected: str | None, run_id: str, holder: str) -> bool:
        """Take lock ``name`` if it is free (``expected`` None) or still held by run ``expected``."""
        t = m.SYS_REPL_LOCK.c
        values = {"RUN_ID": run_id, "HOLDER": holder, "HEARTBEAT": utcnow()}
        try:
            with self.begin() as conn:
                if expected is None:
                    conn.execute(sa.insert(m.SYS_REPL_LOCK).values(LOCK_NAME=name, **values))
                else:
                    result = conn.execute(
                        sa.update(m.SYS_REPL_LOCK).where(t.LOCK_NAME == name, t.RUN_ID == expected).values(**values)
                    )
                    if result.rowcount != 1:
                        return False
                lease_log.acquired(conn, name, run_id, holder, values["HEARTBEAT"])
                return True
        except IntegrityError:
            return False

    def heartbeat_lock(self, name: str, run_id: str) -> None:
        t = m.SYS_REPL_LOCK.c
        with self.begin() as conn:
            conn.execute(
                sa.update(m.SYS_REPL_LOCK).where(t.LOCK_NAME == name, t.RUN_ID == run_id).values(HEARTBEAT=utcnow())
            )

    def release_lock(self, name: str, run_id: str) -> None:
        t = m.SYS_REPL_LOCK.c
        with self.begin() as conn:
            if conn.execute(sa.delete(m.SYS_REPL_LOCK).where(t.LOCK_NAME == name, t.RUN_ID == run_id)).rowcount:
                lease_log.released(conn, name, run_id, utcnow())

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
                    .where(t.SN_NAME == name, sa.or_(t.SN_LAST_TS.is_(None), t.SN_LAST_TS < last_ts))
                    .values(SN_LAST_TS=last_ts)
                )

    def record_complete(self, name: str, last_ts: datetime | None) -> None:
        """After a complete refresh: SN_LAST_TS is the high-water mark taken before the copy; the replay
        log of the old content no longer describes the destination; nothing requires another complete
        refresh (SN_COMPLETE_TS: log entries purged before this mark were in the copy)."""
        with self.begin() as conn:
            conn.execute(
                sa.update(m.SYS_SNAPSHOT)
                .where(name == m.SYS_SNAPSHOT.c.SN_NAME)
                .values(SN_LAST_TS=last_ts, SN_COMPLETE_TS=last_ts, SN_NEEDS_COMPLETE=None, SN_LAST_UPD_BM=None)
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

    # ------------------------------------------------------------------ servers

    def servers(self) -> list[ServerRecord]:
        return self._all(ServerRecord, order_by=[m.SYS_SERVERS.c.SERVER])

    def server(self, name: str) -> ServerRecord | None:
        return self._one(ServerRecord, m.SYS_SERVERS.c.SERVER == name)

    def server_of_conn(self, conn_id: str) -> ServerRecord | None:
        return self._one(ServerRecord, m.SYS_SERVERS.c.DB_ADDRESS == conn_id)

    def add_server(self, record: ServerRecord, duplicate: SnapreplError) -> None:
        self._insert(record, duplicate)

    # ------------------------------------------------------------------ publications and subscriptions

    def publications(self) -> list[PublicationRecord]:
        return self._all(PublicationRecord, order_by=[m.SYS_SNAPSHOT_PUB.c.SP_ITEM])

    def publication(self, item: str) -> PublicationRecord | None:
        return self._one(PublicationRecord, m.SYS_SNAPSHOT_PUB.c.SP_ITEM == item)

    def add_publication(self, record: PublicationRecord, duplicate: SnapreplError) -> None:
        self._insert(record, duplicate)

    def update_publication(self, item: str, **values: Any) -> None:
        with self.begin() as conn:
            conn.execute(
                sa.update(m.SYS_SNAPSHOT_PUB)
                .where(m.SYS_SNAPSHOT_PUB.c.SP_ITEM == item)
                .values(**{k.upper(): v for k, v in values.items()})
            )

    def delete_publication(self, item: str) -> None:
        """Unregister a publication with its subscriptions, resolvers and update replay log."""
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_SNAPSHOT_SUB).where(m.SYS_SNAPSHOT_SUB.c.SS_ITEM == item))
            conn.execute(sa.delete(m.SYS_SNAPSHOT_CR).where(m.SYS_SNAPSHOT_CR.c.CR_TABLE_NAME == item))
            conn.execute(sa.delete(m.SYS_URPLOG).where(m.SYS_URPLOG.c.ITEM == item))
            conn.execute(sa.delete(m.SYS_SNAPSHOT_PUB).where(m.SYS_SNAPSHOT_PUB.c.SP_ITEM == item))

    def subscriptions(self, item: str | None = None) -> list[SubscriptionRecord]:
        t = m.SYS_SNAPSHOT_SUB.c
        where = [t.SS_ITEM == item] if item is not None else []
        return self._all(SubscriptionRecord, *where, order_by=[t.SS_ITEM, t.SS_SERVER])

    def subscription(self, server: str, item: str) -> SubscriptionRecord | None:
        t = m.SYS_SNAPSHOT_SUB.c
        return self._one(SubscriptionRecord, t.SS_SERVER == server, t.SS_ITEM == item)

    def add_subscription(self, record: SubscriptionRecord, duplicate: SnapreplError) -> None:
        self._insert(record, duplicate)

    def update_subscription(self, server: str, item: str, **values: Any) -> None:
        t = m.SYS_SNAPSHOT_SUB.c
        with self.begin() as conn:
            conn.execute(
                sa.update(m.SYS_SNAPSHOT_SUB)
                .where(t.SS_SERVER == server, t.SS_ITEM == item)
                .values(**{k.upper(): v for k, v in values.items()})
            )

    def delete_subscription(self, server: str, item: str) -> None:
        t, u = m.SYS_SNAPSHOT_SUB.c, m.SYS_URPLOG.c
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_SNAPSHOT_SUB).where(t.SS_SERVER == server, t.SS_ITEM == item))
            conn.execute(
                sa.delete(m.SYS_URPLOG).where(
                    u.ITEM == item, sa.or_(u.SOURCE_SERVER == server, u.TARGET_SERVER == server)
                )
            )

    # ------------------------------------------------------------------ conflict resolvers

    def resolvers(self, table: str, kind: str | None = None) -> list[ResolverRecord]:
        t = m.SYS_SNAPSHOT_CR.c
        where = [t.CR_TABLE_NAME == table] + ([t.CR_TYPE == kind] if kind else [])
        return self._all(ResolverRecord, *where, order_by=[t.CR_TYPE, t.CR_ORDER])

    def add_resolver(self, record: ResolverRecord, duplicate: SnapreplError) -> None:
        values = record.to_values()
        values.pop("CR_ID")
        try:
            with self.begin() as conn:
                conn.execute(sa.insert(m.SYS_SNAPSHOT_CR).values(**values))
        except IntegrityError:
            raise duplicate from None

    # ------------------------------------------------------------------ update replay log

    def urplog_since(self, item: str, source: str, target: str, since: datetime | None) -> set[str]:
        """RLOG_ROWGUIDs of ``item`` already applied from ``source`` to ``target`` (SNAPTIME >= ``since``)."""
        t = m.SYS_URPLOG.c
        query = sa.select(t.RLOG_ROWGUID).where(t.ITEM == item, t.SOURCE_SERVER == source, t.TARGET_SERVER == target)
        if since is not None:
            query = query.where(t.SNAPTIME >= since)
        with self.begin() as conn:
            return {row[0] for row in conn.execute(query)}

    def urplog_contains(self, item: str, source: str, target: str, guids: Sequence[str]) -> set[str]:
        t = m.SYS_URPLOG.c
        found: set[str] = set()
        with self.begin() as conn:
            for start in range(0, len(guids), 500):
                chunk = list(guids[start : start + 500])
                query = sa.select(t.RLOG_ROWGUID).where(
                    t.ITEM == item, t.SOURCE_SERVER == source, t.TARGET_SERVER == target, t.RLOG_ROWGUID.in_(chunk)
                )
                found.update(row[0] for row in conn.execute(query))
        return found

    def record_replayed(
        self,
        item: str,
        source: str,
        target: str,
        entries: Sequence[tuple[str, datetime]],
        subscription: tuple[str, dict[str, Any]] | None = None,
    ) -> None:
        """Record entries of ``item`` applied from ``source`` to ``target`` (and the subscription's new
        watermarks), in one transaction."""
        with self.begin() as conn:
            if entries:
                conn.execute(
                    sa.insert(m.SYS_URPLOG),
                    [
                        {
                            "ITEM": item,
                            "SOURCE_SERVER": source,
                            "TARGET_SERVER": target,
                            "RLOG_ROWGUID": g,
                            "SNAPTIME": ts,
                        }
                        for g, ts in entries
                    ],
                )
            if subscription is not None:
                server, values = subscription
                t = m.SYS_SNAPSHOT_SUB.c
                conn.execute(
                    sa.update(m.SYS_SNAPSHOT_SUB)
                    .where(t.SS_SERVER == server, t.SS_ITEM == item)
                    .values(**{k.upper(): v for k, v in values.items()})
                )

    def purge_urplog(self, item: str, source: str, target: str, before: datetime) -> int:
        t = m.SYS_URPLOG.c
        with self.begin() as conn:
            return conn.execute(
                sa.delete(m.SYS_URPLOG).where(
                    t.ITEM == item, t.SOURCE_SERVER == source, t.TARGET_SERVER == target, t.SNAPTIME < before
                )
            ).rowcount

    def urplog_size(self, item: str, source: str, target: str) -> int:
        t = m.SYS_URPLOG.c
        with self.begin() as conn:
            return conn.execute(
                sa.select(sa.func.count())
                .select_from(m.SYS_URPLOG)
                .where(t.ITEM == item, t.SOURCE_SERVER == source, t.TARGET_SERVER == target)
            ).scalar_one()

    # ------------------------------------------------------------------ conflict ledger

    def record_conflicts(
        self, item: str, origin: str, conflicts: Sequence[dict[str, Any]], cleared: Sequence[str] = ()
    ) -> None:
        """Put conflicts met replaying ``origin``'s entries in the ledger, once per entry (CF_ENTRY): a
        conflict judged again by a run repeating a killed one replaces its earlier record if the
        decision changed. Entries in ``cleared`` were judged no conflict this time: an unnotified
        record of them (from a run killed before it applied them) is removed."""
        t = m.SYS_SNAPSHOT_CONFLICT.c
        entries = [c["CF_ENTRY"] for c in conflicts]
        with self.begin() as conn:
            known: dict[str, tuple[int, int]] = {}
            for start in range(0, len(entries), 500):
                query = sa.select(t.CF_ENTRY, t.CF_ID, t.CF_DECISION).where(
                    t.CF_ITEM == item, t.CF_ORIGIN == origin, t.CF_ENTRY.in_(entries[start : start + 500])
                )
                known.update({row[0]: (row[1], row[2]) for row in conn.execute(query)})
            new = [c for c in conflicts if c["CF_ENTRY"] not in known]
            if new:
                conn.execute(sa.insert(m.SYS_SNAPSHOT_CONFLICT), new)
            for conflict in conflicts:
                earlier = known.get(conflict["CF_ENTRY"])
                if earlier is not None and earlier[1] != conflict["CF_DECISION"]:
                    values = {k: v for k, v in conflict.items() if k != "CF_ID"}
                    conn.execute(sa.update(m.SYS_SNAPSHOT_CONFLICT).where(t.CF_ID == earlier[0]).values(**values))
            for start in range(0, len(cleared), 500):
                conn.execute(
                    sa.delete(m.SYS_SNAPSHOT_CONFLICT).where(
                        t.CF_ITEM == item,
                        t.CF_ORIGIN == origin,
                        t.CF_ENTRY.in_(list(cleared[start : start + 500])),
                        t.CF_NOTIFIED.is_(False),
                    )
                )

    def conflicts(self, item: str | None = None, *, unnotified: bool = False) -> list[dict[str, Any]]:
        t = m.SYS_SNAPSHOT_CONFLICT.c
        query = sa.select(m.SYS_SNAPSHOT_CONFLICT).order_by(t.CF_ID)
        if item is not None:
            query = query.where(t.CF_ITEM == item)
        if unnotified:
            query = query.where(t.CF_NOTIFIED.is_(False))
        with self.begin() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def conflict_summary(self) -> list[dict[str, Any]]:
        t = m.SYS_SNAPSHOT_CONFLICT.c
        query = (
            sa.select(
                t.CF_ITEM,
                t.CF_TYPE,
                t.CF_DECISION,
                sa.func.count(),
                sa.func.max(t.CF_AT),
                sa.func.sum(sa.case((t.CF_NOTIFIED.is_(False), 1), else_=0)),
            )
            .group_by(t.CF_ITEM, t.CF_TYPE, t.CF_DECISION)
            .order_by(t.CF_ITEM, t.CF_TYPE, t.CF_DECISION)
        )
        with self.begin() as conn:
            return [
                {"item": r[0], "type": r[1], "decision": r[2], "count": r[3], "last_at": r[4], "unnotified": r[5]}
                for r in conn.execute(query)
            ]

    def mark_notified(self, ids: Sequence[int]) -> None:
        if not ids:
            return
        t = m.SYS_SNAPSHOT_CONFLICT.c
        with self.begin() as conn:
            conn.execute(sa.update(m.SYS_SNAPSHOT_CONFLICT).where(t.CF_ID.in_(list(ids))).values(CF_NOTIFIED=True))

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
    "PublicationRecord",
    "ResolverRecord",
    "ServerRecord",
    "SnapshotRecord",
    "SubscriptionRecord",
    "catalog_connection",
    "connection_from_url",
    "metadata_database_url",
    "utcnow",
]

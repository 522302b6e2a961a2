"""Two-way replication in the catalog: servers (SYS_SERVERS), publications (SYS_SNAPSHOT_PUB), their
subscriptions (SYS_SNAPSHOT_SUB) and conflict resolvers (SYS_SNAPSHOT_CR)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase, column_values
from snaprepl.catalog.records import PublicationRecord, ResolverRecord, ServerRecord, SubscriptionRecord
from snaprepl.errors import SnapreplError


class Publications(CatalogDatabase):
    """Servers, publications, subscriptions and conflict resolvers."""

    def servers(self) -> list[ServerRecord]:
        return self._all(ServerRecord, order_by=[m.SYS_SERVERS.c.SERVER])

    def server(self, name: str) -> ServerRecord | None:
        return self._one(ServerRecord, m.SYS_SERVERS.c.SERVER == name)

    def server_of_conn(self, conn_id: str) -> ServerRecord | None:
        return self._one(ServerRecord, m.SYS_SERVERS.c.DB_ADDRESS == conn_id)

    def add_server(self, record: ServerRecord, duplicate: SnapreplError) -> None:
        self._insert(record, duplicate)

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
                .values(**column_values(values))
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
                .values(**column_values(values))
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

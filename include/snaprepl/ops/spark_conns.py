"""``REPL_SET_SNAPSHOT_SPARK_CONN`` and ``REPL_SET_PUBLICATION_SPARK_CONN``: the Spark connection a
snapshot's refreshes or a publication's syncs run with (SN_SPARK_CONN, SP_SPARK_CONN), in place of
``[snaprepl] spark_conn_id``. Its type says where the jobs run: ``spark`` by spark-submit,
``spark_connect`` on a Spark Connect server (see :mod:`snaprepl.submit.submission`). NULL goes back
to the setting's connection. The catalog keeps the connection's id only."""

from __future__ import annotations

from dataclasses import dataclass

from snaprepl.catalog.lookup import find_snapshot
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import TableRef
from snaprepl.ops.publications import find_publication
from snaprepl.submit.submission import check_spark_connection


@dataclass(frozen=True)
class SparkConnSet:
    what: str
    conn_id: str | None
    mode: str | None

    def __str__(self) -> str:
        if self.conn_id is None:
            return f"{self.what}: Spark connection of [snaprepl] spark_conn_id"
        return f"{self.what}: Spark connection {self.conn_id} ({self.mode} mode)"


def set_snapshot_spark_conn(name: TableRef, conn_id: str | None, *, catalog: Catalog) -> SparkConnSet:
    """The Spark connection of snapshot ``name``'s refreshes (None: ``[snaprepl] spark_conn_id``'s)."""
    record = find_snapshot(catalog, name)
    mode = check_spark_connection(conn_id) if conn_id else None
    catalog.update_snapshot(record.sn_name, sn_spark_conn=conn_id or None)
    return SparkConnSet(f"snapshot {record.sn_name}", conn_id or None, mode)


def set_publication_spark_conn(item: TableRef, conn_id: str | None, *, catalog: Catalog) -> SparkConnSet:
    """The Spark connection of publication ``item``'s syncs (None: ``[snaprepl] spark_conn_id``'s)."""
    publication, _ = find_publication(catalog, item)
    mode = check_spark_connection(conn_id) if conn_id else None
    catalog.update_publication(publication.sp_item, sp_spark_conn=conn_id or None)
    return SparkConnSet(f"publication {publication.sp_item}", conn_id or None, mode)

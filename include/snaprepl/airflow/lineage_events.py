"""OpenLineage facets of snaprepl's tasks: what a refresh read and wrote, named as OpenLineage names
tables (:func:`snaprepl.catalog.table_lineage.openlineage_dataset`), with the rows it wrote.

The OpenLineage provider asks the operator when the task completes
(``get_openlineage_facets_on_complete``); with no ``[openlineage] transport`` configured it asks nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from airflow.providers.common.compat.openlineage.facet import (
    InputDataset,
    OutputDataset,
    OutputStatisticsOutputDatasetFacet,
)
from airflow.providers.openlineage.extractors import OperatorLineage

from snaprepl.bidir.servers import server_conn
from snaprepl.catalog.records import SnapshotRecord
from snaprepl.catalog.store import Catalog
from snaprepl.catalog.table_lineage import Place, openlineage_dataset, sources_of
from snaprepl.errors import SnapreplError
from snaprepl.refresh.model import COMPLETE

log = logging.getLogger(__name__)


def rows_written(outcome: dict[str, Any]) -> int:
    """Rows a refresh wrote into its destination: all it copied, or its upserts and deletes."""
    if outcome.get("kind") == COMPLETE:
        return int(outcome.get("rows_copied") or 0)
    return int(outcome.get("rows_upserted") or 0) + int(outcome.get("rows_deleted") or 0)


def _dataset(place: Place, kind: Any, **facets: Any) -> Any:
    namespace, name = openlineage_dataset(place)
    return kind(namespace=namespace, name=name, **facets)


def _written(place: Place, rows: int) -> Any:
    statistics = OutputStatisticsOutputDatasetFacet(rowCount=rows)
    return _dataset(place, OutputDataset, outputFacets={"outputStatistics": statistics})


def sync_lineage(catalog: Catalog, item: str, server: str, step: str, outcomes: list[dict[str, Any]]) -> Any:
    """The ``OperatorLineage`` of a sync step: a pull reads the subscriber's replica and writes the
    publisher's table; a push or an initial load the other way round; with the rows written."""
    publication, subscription = catalog.log(item), catalog.subscription(server, item)
    if publication is None or subscription is None or subscription.ss_table is None:
        return OperatorLineage()  # dropped meanwhile: nothing to name
    publisher = Place(publication.snl_conn, publication.snl_schema, publication.snl_table)
    replica = Place(server_conn(server, catalog=catalog), subscription.ss_schema, subscription.ss_table)
    source, dest = (replica, publisher) if step == "pull" else (publisher, replica)
    rows = sum(int(o.get("applied") or 0) + int(o.get("rows") or 0) for o in outcomes)
    return OperatorLineage(inputs=[_dataset(source, InputDataset)], outputs=[_written(dest, rows)])


def refresh_lineage(record: SnapshotRecord, outcome: dict[str, Any]) -> Any:
    """The ``OperatorLineage`` of a refresh of snapshot ``record`` that ended with ``outcome``: the tables
    its query reads, and its destination with the rows written (and read, for a complete refresh)."""
    try:
        sources = sources_of(record)
    except Exception as err:  # a query sqlglot cannot read: the output is still worth reporting
        log.warning("the sources of snapshot %s are left out of its lineage: %s", record.sn_name, err)
        sources = []
    inputs = []
    for place in sources:
        try:
            inputs.append(_dataset(place, InputDataset))
        except SnapreplError as err:
            log.warning("source %s left out of the lineage of %s: %s", place, record.sn_name, err.message)
    dest = Place(record.sn_dest_conn, record.sn_dest_schema, record.sn_dest_table)
    return OperatorLineage(inputs=inputs, outputs=[_written(dest, rows_written(outcome))])

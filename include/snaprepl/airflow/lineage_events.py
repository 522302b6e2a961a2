"""OpenLineage facets of snaprepl's tasks: what a refresh read and wrote, named as OpenLineage names
tables (:func:`snaprepl.lineage.openlineage_dataset`), with the rows it wrote.

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

from snaprepl.catalog.records import SnapshotRecord
from snaprepl.errors import SnapreplError
from snaprepl.lineage import Place, openlineage_dataset, sources_of
from snaprepl.refresh.model import COMPLETE

log = logging.getLogger(__name__)


def rows_written(outcome: dict[str, Any]) -> int:
    """Rows a refresh wrote into its destination: all it copied, or its upserts and deletes."""
    if outcome.get("kind") == COMPLETE:
        return int(outcome.get("rows_copied") or 0)
    return int(outcome.get("rows_upserted") or 0) + int(outcome.get("rows_deleted") or 0)


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
            namespace, name = openlineage_dataset(place)
        except SnapreplError as err:
            log.warning("source %s left out of the lineage of %s: %s", place, record.sn_name, err.message)
            continue
        inputs.append(InputDataset(namespace=namespace, name=name))
    dest = Place(record.sn_dest_conn, record.sn_dest_schema, record.sn_dest_table)
    namespace, name = openlineage_dataset(dest)
    statistics = OutputStatisticsOutputDatasetFacet(rowCount=rows_written(outcome))
    output = OutputDataset(namespace=namespace, name=name, outputFacets={"outputStatistics": statistics})
    return OperatorLineage(inputs=inputs, outputs=[output])

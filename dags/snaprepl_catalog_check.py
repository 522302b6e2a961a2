"""Reports snaprepl catalog records that cannot become Airflow DAGs, as an import error of this file.

dags/snaprepl_dags.py leaves such a record out and loads every other DAG; Airflow would mark all of
that file's DAGs stale if it raised, so the error naming the record is raised here instead. This
file defines no DAG.
"""

from snaprepl.airflow.dag_factory import unbuildable_records
from snaprepl.errors import SnapreplError

_BROKEN = unbuildable_records()
if _BROKEN:
    raise SnapreplError(
        f"{len(_BROKEN)} snaprepl catalog record(s) cannot become DAGs: " + "; ".join(_BROKEN),
        "fix or drop the record (the other snaprepl DAGs are loaded)",
    )

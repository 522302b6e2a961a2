"""Airflow's external DB manager for the snaprepl catalog.

Registered in ``[database] external_db_managers``, it makes ``airflow db migrate`` create and
upgrade the SYS_* tables in the metadata database, beside Airflow's own (as the FAB and edge3
providers keep theirs), with a version table of its own.
"""

from __future__ import annotations

from airflow.utils.db_manager import BaseDBManager

from snaprepl.catalog.migrate import ALEMBIC_INI, MIGRATIONS_DIR
from snaprepl.catalog.models import VERSION_TABLE, metadata


class SnapreplDBManager(BaseDBManager):
    """Migrates the snaprepl catalog with ``airflow db migrate``."""

    metadata = metadata
    version_table_name = VERSION_TABLE
    migration_dir = str(MIGRATIONS_DIR)
    alembic_file = str(ALEMBIC_INI)
    supports_table_dropping = True
    revision_heads_map = {"0.1.0": "0001"}

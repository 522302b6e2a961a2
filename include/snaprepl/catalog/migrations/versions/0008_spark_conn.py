"""A Spark connection per snapshot and per publication (SN_SPARK_CONN, SP_SPARK_CONN): the Airflow
connection their jobs run with, overriding ``[snaprepl] spark_conn_id`` (NULL: the setting's). Its
type decides where they run: ``spark`` by spark-submit, ``spark_connect`` on a Spark Connect server.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

COMMENT = "Airflow connection of its Spark jobs (NULL = [snaprepl] spark_conn_id)"


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.add_column(sa.Column("SN_SPARK_CONN", sa.String(255), nullable=True, comment=COMMENT))
    with op.batch_alter_table("SYS_SNAPSHOT_PUB") as batch:
        batch.add_column(sa.Column("SP_SPARK_CONN", sa.String(255), nullable=True, comment=COMMENT))


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_PUB") as batch:
        batch.drop_column("SP_SPARK_CONN")
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.drop_column("SN_SPARK_CONN")

"""Collections: resources waiting for a WebDAV lock to be released (SYS_DAV_WAITING): the version to
write, where its body waits on the locked side, and since when.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

NAME = sa.String(400)
ASCII_IDENT = sa.String(255).with_variant(
    mysql.VARCHAR(255, charset="ascii", collation="ascii_bin"), "mysql", "mariadb"
)
PATH_KEY = sa.String(64).with_variant(mysql.VARCHAR(64, charset="ascii"), "mysql", "mariadb")
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "SYS_DAV_WAITING",
        sa.Column("DW_ITEM", NAME, primary_key=True, comment="published collection: /path/@conn_id"),
        sa.Column("DW_SERVER", ASCII_IDENT, primary_key=True, comment="server where the resource is locked"),
        sa.Column("DW_PATH_KEY", PATH_KEY, primary_key=True, comment="sha256 of DW_PATH"),
        sa.Column("DW_PATH", sa.Text, nullable=False, comment="resource path relative to the collection"),
        sa.Column("DW_ORIGIN", ASCII_IDENT, nullable=False, comment="server the waiting version comes from"),
        sa.Column("DW_ROWGUID", ASCII_IDENT, nullable=False, comment="the waiting version"),
        sa.Column(
            "DW_TEMP", sa.Text, comment="its body under _SYS_REPL_BACKUP/.locked/ on DW_SERVER; NULL: a deletion"
        ),
        sa.Column("DW_SINCE", TIMESTAMP, nullable=False, comment="first found locked"),
        sa.Column("DW_LAST_TRY", TIMESTAMP, nullable=False, comment="last found locked"),
    )


def downgrade() -> None:
    op.drop_table("SYS_DAV_WAITING")

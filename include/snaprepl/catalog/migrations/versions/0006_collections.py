"""Collections (type 1 publications): a manifest per server of every replicated resource, as of the
last scan (SYS_DAV_MANIFEST), and the collections' conflict resolvers (SYS_DAV_CR).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
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

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "SYS_DAV_MANIFEST",
        sa.Column("DM_ITEM", NAME, primary_key=True),
        sa.Column("DM_SERVER", ASCII_IDENT, primary_key=True),
        sa.Column("DM_PATH_KEY", PATH_KEY, primary_key=True),
        sa.Column("DM_PATH", sa.Text, nullable=False),
        sa.Column("DM_ETAG", sa.String(255)),
        sa.Column("DM_SIZE", sa.BigInteger),
        sa.Column("DM_MTIME", sa.String(64)),
        sa.Column("DM_ROWGUID", ASCII_IDENT, nullable=False),
        sa.Column("DM_OLD_ROWGUID", ASCII_IDENT),
        sa.Column("DM_DELETED", sa.Boolean, nullable=False),
    )
    op.create_table(
        "SYS_DAV_CR",
        sa.Column("DCR_ID", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("DCR_COLLECTION", NAME, nullable=False),
        sa.Column("DCR_ORDER", sa.Integer, nullable=False),
        sa.Column("DCR_CLASS", sa.String(500), nullable=False),
        sa.Column("DCR_NOTIFY_EMAIL", sa.String(500)),
        sa.Column("DCR_NOTIFY_TEXT", sa.Text),
        sa.UniqueConstraint("DCR_COLLECTION", "DCR_ORDER", name="uq_sys_dav_cr_order"),
    )


def downgrade() -> None:
    op.drop_table("SYS_DAV_CR")
    op.drop_table("SYS_DAV_MANIFEST")

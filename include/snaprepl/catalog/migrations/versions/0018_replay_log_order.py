"""The replay log (SYS_RPLOG) keyed in the order refreshes write it: (TARGET, SNAPTIME, RLOG_ROWGUID).

Its key was (TARGET, RLOG_ROWGUID), random UUIDs, with a second index on (TARGET, SNAPTIME): every
refresh wrote its entries into both, the key's pages all over the table. A refresh's entries share a
few SNAPTIMEs, later than those already there, so with SNAPTIME second in the key they go at the end
of one index, page after page (issue 24). A RLOG_ROWGUID has one SNAPTIME, its log row's, so the key
is as unique as before. PostgreSQL and MariaDB change the key in place (grants stay); SQLite copies
the table into one without rowid (the key is the table).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
ASCII_IDENT = sa.String(length=255).with_variant(
    mysql.VARCHAR(255, charset="ascii", collation="ascii_bin"), "mysql", "mariadb"
)
COLUMNS = ("TARGET", "RLOG_ROWGUID", "SNAPTIME")


def _create(name: str, key: tuple[str, ...], pk_name: str | None = None, **kwargs: Any) -> sa.Table:
    return op.create_table(
        name,
        sa.Column("TARGET", sa.String(400), nullable=False, comment="snapshot (SN_NAME) the entry was applied to"),
        sa.Column("RLOG_ROWGUID", ASCII_IDENT, nullable=False),
        sa.Column("SNAPTIME", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint(*key, name=pk_name),
        **kwargs,
    )


def _move(into: sa.Table) -> None:
    """Copy SYS_RPLOG into ``into``, then put ``into`` in its place."""
    old = sa.table("SYS_RPLOG", *(sa.column(c) for c in COLUMNS))
    op.execute(sa.insert(into).from_select(COLUMNS, sa.select(*(old.c[c] for c in COLUMNS))))
    op.drop_table("SYS_RPLOG")
    op.rename_table(into.name, "SYS_RPLOG")


def _rekey(key: tuple[str, ...], pk_name: str | None, *, sqlite_rowid: bool) -> None:
    """Give SYS_RPLOG the primary key ``key`` in place: the table keeps its grants (``snaprepl catalog
    grant``'s role) and its rows. SQLite cannot change a key: there the table is copied, without rowid."""
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        _move(_create("SYS_RPLOG_0018", key, pk_name=pk_name, sqlite_with_rowid=sqlite_rowid))
        return
    old = sa.inspect(bind).get_pk_constraint("SYS_RPLOG")["name"] or "PRIMARY"
    op.drop_constraint(old, "SYS_RPLOG", type_="primary")
    op.create_primary_key(pk_name or "SYS_RPLOG_pkey", "SYS_RPLOG", list(key))


def upgrade() -> None:
    op.drop_index("ix_sys_rplog_target_snaptime", table_name="SYS_RPLOG")
    _rekey(("TARGET", "SNAPTIME", "RLOG_ROWGUID"), "pk_sys_rplog", sqlite_rowid=False)


def downgrade() -> None:
    _rekey(("TARGET", "RLOG_ROWGUID"), None, sqlite_rowid=True)
    op.create_index("ix_sys_rplog_target_snaptime", "SYS_RPLOG", ["TARGET", "SNAPTIME"], unique=False)

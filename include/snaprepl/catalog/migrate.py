"""Running the catalog's Alembic migrations, and checking a database is at their head.

Alembic is imported by the functions that migrate: opening the catalog checks its revision with plain
SQL and the migration files, so commands such as ``snaprepl status`` never load it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from snaprepl.catalog.models import VERSION_TABLE

if TYPE_CHECKING:
    from alembic.config import Config

CATALOG_DIR = Path(__file__).resolve().parent
ALEMBIC_INI = CATALOG_DIR / "alembic.ini"
MIGRATIONS_DIR = CATALOG_DIR / "migrations"
_REVISION = re.compile(r"^revision\s*(?::[^=]*)?=\s*[\"']([^\"']+)[\"']", re.MULTILINE)
_DOWN_REVISION = re.compile(r"^down_revision\s*(?::[^=]*)?=\s*[\"']([^\"']+)[\"']", re.MULTILINE)


def alembic_config(url: str | None = None) -> Config:
    from alembic.config import Config

    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    if url:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def head_revision() -> str:
    """The newest migration's revision, read from the migration files (Alembic costs a second to load;
    ``tests/unit/test_catalog_revisions.py`` checks this against Alembic's own answer)."""
    revisions: dict[str, str | None] = {}
    for path in (MIGRATIONS_DIR / "versions").glob("*.py"):
        text = path.read_text()
        found = _REVISION.search(text)
        if found:
            down = _DOWN_REVISION.search(text)
            revisions[found.group(1)] = down.group(1) if down else None
    heads = set(revisions) - set(revisions.values())
    if len(heads) != 1:
        return _alembic_head_revision()
    return heads.pop()


def _alembic_head_revision() -> str:
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    return heads[0]


def current_revision(connection: sa.Connection) -> str | None:
    """The revision ``connection``'s database is at (None without catalog tables): the row of Alembic's
    version table, read with plain SQL."""
    if not sa.inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).fetchall()
    return str(rows[0][0]) if len(rows) == 1 else None


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    """Migrate the catalog tables of ``engine``'s database to ``revision``."""
    from alembic import command

    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

"""Running the catalog's Alembic migrations, and checking a database is at their head.

Alembic is imported by the functions that use it: opening the catalog (e.g. to build DAGs) loads it
only when the revision check runs.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from snaprepl.catalog.models import VERSION_TABLE

if TYPE_CHECKING:
    from alembic.config import Config

CATALOG_DIR = Path(__file__).resolve().parent
ALEMBIC_INI = CATALOG_DIR / "alembic.ini"
MIGRATIONS_DIR = CATALOG_DIR / "migrations"


def alembic_config(url: str | None = None) -> Config:
    from alembic.config import Config

    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    if url:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    return heads[0]


def current_revision(connection: sa.Connection) -> str | None:
    from alembic.migration import MigrationContext

    # Alembic announces its context at INFO on every check; that is noise on a command line.
    logging.getLogger("alembic.runtime.migration").setLevel(logging.WARNING)
    return MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE}).get_current_revision()


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    """Migrate the catalog tables of ``engine``'s database to ``revision``."""
    from alembic import command

    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

"""Where the catalog lives: the catalog connection if defined, else the Airflow metadata database."""

from __future__ import annotations

from sqlalchemy.engine import make_url

from snaprepl.common.airflow_config import airflow_option
from snaprepl.connections.lookup import ConnectionInfo, get_connection
from snaprepl.errors import CatalogUnavailable, ConnectionNotFound
from snaprepl.settings import Settings


def connection_from_url(url: str, conn_id: str) -> ConnectionInfo:
    """A :class:`ConnectionInfo` for a SQLAlchemy URL (the metadata database's)."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    conn_type = {"postgresql": "postgres", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite"}.get(backend)
    if conn_type is None:
        raise CatalogUnavailable(f"the catalog cannot live in a {backend} database")
    return ConnectionInfo(
        conn_id=conn_id,
        conn_type=conn_type,
        host=parsed.host,
        port=parsed.port,
        login=parsed.username,
        password=parsed.password,
        schema=parsed.database,
        extra={"sqlalchemy_url": parsed.render_as_string(hide_password=False)},
    )


def metadata_database_url() -> str | None:
    """The Airflow metadata database's URL, or ``None`` where Airflow hides it (tasks, DAG parsing)."""
    url = airflow_option("database", "sql_alchemy_conn")
    if not url or url.startswith("airflow-db-not-allowed"):
        return None
    return url


def catalog_connection(settings: Settings) -> ConnectionInfo:
    """Where the catalog lives: the catalog connection if defined, else the metadata database."""
    try:
        return get_connection(settings.catalog_conn_id)
    except ConnectionNotFound:
        pass
    url = metadata_database_url()
    if url is None:
        raise CatalogUnavailable(
            f"the snaprepl catalog is not reachable from this process: connection '{settings.catalog_conn_id}' "
            "is not defined and Airflow hides its metadata database from tasks and DAG parsing",
            f"define connection '{settings.catalog_conn_id}' pointing at the metadata database, e.g. "
            f"AIRFLOW_CONN_{settings.catalog_conn_id.upper()}=<the value of sql_alchemy_conn>",
        )
    return connection_from_url(url, settings.catalog_conn_id)

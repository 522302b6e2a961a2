"""PostgreSQL: commit chunk after chunk of a staging table inside the server (PostgreSQL 11+: a DO
block may COMMIT when it is not run inside a transaction block), without a client round trip per chunk."""

from __future__ import annotations

from collections.abc import Sequence

#: The bind parameter of the chunk statements, which the loop passes as ``$1``.
CHUNK_PARAMETER = ":chunk"
#: A server runs a statement to its end even when its client is gone, unless told to look (PostgreSQL
#: 14+). Asked, so a killed load's last statement may stop early; nothing relies on it: the chunks a
#: killed load still commits are replicated merges, which the load run again merges once more.
_WATCH_CLIENT = (
    "DO $snaprepl_loop$ BEGIN IF current_setting('server_version_num')::int >= 140000 THEN "
    "SET client_connection_check_interval = '{interval}'; END IF; END $snaprepl_loop$"
)


def chunk_loop_sql(setup: Sequence[str], statements: Sequence[str], chunks: Sequence[int]) -> list[str]:
    """Statements for one session outside a transaction block: a DO block that, for each of ``chunks``
    in order, runs ``setup`` and ``statements`` (whose ``:chunk`` is that chunk's number) and commits,
    between two that ask the server to stop it if the client goes away (PostgreSQL 14+)."""
    body = [f"EXECUTE {_literal(s)};" for s in setup]
    body += [f"EXECUTE {_literal(s.replace(CHUNK_PARAMETER, '$1'))} USING snaprepl_chunk;" for s in statements]
    numbers = ", ".join(str(int(c)) for c in chunks)
    loop = (
        "DO $snaprepl_loop$ DECLARE snaprepl_chunk bigint; BEGIN "
        f"FOREACH snaprepl_chunk IN ARRAY ARRAY[{numbers}]::bigint[] LOOP "
        f"{' '.join(body)} COMMIT; END LOOP; END $snaprepl_loop$"
    )
    return [_WATCH_CLIENT.format(interval="100ms"), loop, _WATCH_CLIENT.format(interval="0")]


def _literal(text: str) -> str:
    if "$snaprepl_loop$" in text:
        raise ValueError("a statement of the chunk loop contains its quote")
    return "'" + text.replace("'", "''") + "'"

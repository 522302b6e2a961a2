"""PostgreSQL: commit chunk after chunk of a staging table inside the server (PostgreSQL 11+: a DO
block may COMMIT when it is not run inside a transaction block), without a client round trip per chunk.

The chunk's statements are the block's own static SQL, not ``EXECUTE``\\d text: PL/pgSQL prepares
each once per block and reuses its plan for every chunk, where ``EXECUTE`` planned it again each time
(at a hundred rows per commit, planning cost about as much as the insert)."""

from __future__ import annotations

from collections.abc import Sequence

#: The bind parameter of the chunk statements, which the loop replaces with its variable.
CHUNK_PARAMETER = ":chunk"
#: The loop's variable holding the chunk number; any column of the same name wins over it (and over
#: PL/pgSQL's own FOUND), as ``#variable_conflict use_column`` tells the block.
_CHUNK_VARIABLE = "snaprepl_loop_chunk_number"
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
    body = [_static(s) for s in setup]
    body += [_static(s.replace(CHUNK_PARAMETER, _CHUNK_VARIABLE)) for s in statements]
    numbers = ", ".join(str(int(c)) for c in chunks)
    loop = (
        f"DO $snaprepl_loop$ #variable_conflict use_column\nDECLARE {_CHUNK_VARIABLE} bigint; BEGIN "
        f"FOREACH {_CHUNK_VARIABLE} IN ARRAY ARRAY[{numbers}]::bigint[] LOOP "
        f"{' '.join(body)} COMMIT; END LOOP; END $snaprepl_loop$"
    )
    return [_WATCH_CLIENT.format(interval="100ms"), loop, _WATCH_CLIENT.format(interval="0")]


def _static(statement: str) -> str:
    """``statement`` as a PL/pgSQL statement: a SELECT's result is thrown away with PERFORM."""
    if "$snaprepl_loop$" in statement:
        raise ValueError("a statement of the chunk loop contains its quote")
    text = statement.strip().rstrip(";")
    if text[:7].upper() == "SELECT ":
        text = "PERFORM " + text[7:]
    return text + ";"

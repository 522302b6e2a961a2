"""PostgreSQL to MariaDB/MySQL: ``COPY ... TO STDOUT (FORMAT csv)`` piped into ``LOAD DATA LOCAL INFILE``,
one key range a task.

MariaDB's fastest bulk path, fed straight from the source without Spark types, Arrow batches or JDBC:
each Spark task opens a psycopg (3) connection to the source and a PyMySQL connection (LOCAL INFILE
allowed on it alone) to the destination, and the rows flow through a named pipe in a private
temporary directory (PyMySQL sends a LOCAL INFILE by reading a file by name). Each range is loaded
in one destination transaction; the caller drops the staging table if any range fails.

The CSV forms agree on both ends: fields separated by commas, enclosed in double quotes where
needed, a double quote doubled inside; NULL is the bare word ``NULL``, which PostgreSQL quotes when
a value spells it and MariaDB reads as the string when quoted. Only types whose text form both read
alike cross (integers, decimals, doubles, character strings, dates and timestamps without a time
zone, the same on both sides); any other column, or a server whose ``local_infile`` is off, leaves
the copy to Spark.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from snaprepl.dialects.model import BulkConnection, Chunks, Column
from snaprepl.dialects.postgres_copy import psycopg2_kwargs
from snaprepl.dialects.postgres_pipe import BLOCK_BYTES, QueryPipe, RangeCopy
from snaprepl.dialects.types import to_generic

#: Generic types whose CSV text PostgreSQL writes as MariaDB reads it.
SAME_TEXT = {
    "smallint",
    "integer",
    "bigint",
    "numeric(p, s)",
    "double precision",
    "varchar(n)",
    "char(n)",
    "long varchar",
    "date",
    "timestamp",
}
#: What a failed task's error text starts with, so the driver finds the database's own message.
FAILURE_MARK = "snaprepl LOAD DATA pipe failed: "
_FAILURE = re.compile(re.escape(FAILURE_MARK) + r"([^\n]*)")


class PostgresMySqlPipe(QueryPipe):
    """Streams a query's result from a PostgreSQL database into a table of a MariaDB/MySQL one."""

    failure_pattern = _FAILURE

    def _carries(self, src: Column, dst: Column) -> bool:
        sent, kept = to_generic(src.type_sql, self.source.name), to_generic(dst.type_sql, self.dest.name)
        return sent.name in SAME_TEXT and sent == kept

    def _server_refusal(self) -> str | None:
        """Why the destination's server refuses LOAD DATA LOCAL INFILE (its ``local_infile`` is off, as
        MySQL 8's default is), or None."""
        import pymysql  # noqa: PLC0415  (asked only where this pipe is considered)

        try:
            with pymysql.connect(**pymysql_kwargs(self.dest_conn), connect_timeout=10) as conn, conn.cursor() as cur:
                cur.execute("SELECT @@GLOBAL.local_infile")
                row = cur.fetchone()
        except pymysql.Error as err:
            return f"the destination could not be asked whether it allows LOAD DATA LOCAL INFILE ({err})"
        return None if row and int(row[0]) else "the destination's server has local_infile off"

    def _task(
        self,
        query: str,
        source_columns: Sequence[Column],
        ranges: Sequence[str | None],
        target: tuple[str, str, Sequence[Column]],
        chunks: Chunks | None = None,
        seen: Callable[[list[Any]], None] | None = None,
    ) -> tuple[list[str], RangeCopy]:
        schema, table, dest_columns = target
        select = ", ".join(self.source.quote(c.name) for c in source_columns)
        copies_out = [
            f"COPY (SELECT {select} FROM ({query}) snaprepl_q{f' WHERE ({r})' if r else ''}) "
            "TO STDOUT (FORMAT csv, NULL 'NULL')"
            for r in ranges
        ]
        into = ", ".join(self.dest.quote(c.name) for c in dest_columns)
        load = (
            f"LOAD DATA LOCAL INFILE '{{path}}' INTO TABLE {self.dest.qualified(schema, table)} CHARACTER SET utf8mb4 "
            "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '' LINES TERMINATED BY '\\n' "
            f"({into})"
        )
        connect = (psycopg2_kwargs(self.source, self.source_conn), pymysql_kwargs(self.dest_conn))
        return copies_out, load_task(connect, self._setup(), copies_out, load)


def pymysql_kwargs(conn: BulkConnection) -> dict[str, Any]:
    """PyMySQL's connect arguments for ``conn`` (its validated host, charset and TLS options)."""
    url = conn.sqlalchemy_url()
    query = dict(url.query)
    kwargs: dict[str, Any] = {
        "host": url.host,
        "port": url.port or 3306,
        "user": url.username,
        "password": url.password or "",
        "database": url.database,
        "charset": query.get("charset", "utf8mb4"),
    }
    for name in ("ssl_ca", "ssl_cert", "ssl_key"):
        if query.get(name):
            kwargs[name] = query[name]
    if "ssl_check_hostname" in query:
        kwargs["ssl_verify_cert"] = bool(query.get("ssl_ca"))
        kwargs["ssl_verify_identity"] = query["ssl_check_hostname"] == "true"
    return kwargs


def load_task(
    connect: tuple[dict[str, Any], dict[str, Any]],
    setup: tuple[list[str], list[str]],
    copies_out: list[str],
    load: str,
) -> RangeCopy:
    """A function piping ``copies_out[i]`` into ``load`` (whose ``{path}`` is the named pipe) for the
    index ``i`` it gets; the rows. Made of closures only: Spark's Python workers need nothing of
    snaprepl; the credentials travel in them, never in a log or command line."""
    source_kwargs, dest_kwargs = connect
    source_setup, dest_setup = setup
    pipe = _loader(dest_kwargs, dest_setup, load, _producer(source_kwargs, source_setup), _releaser())

    def copy(index: int) -> int:
        import psycopg  # noqa: PLC0415  (imported where the Python worker runs this)
        import pymysql  # noqa: PLC0415

        try:
            return pipe(copies_out[index])
        except (psycopg.Error, pymysql.Error) as err:
            message = (str(err).strip().splitlines() or [""])[0]
            raise RuntimeError(f"{FAILURE_MARK}{type(err).__name__}: {message}") from None

    return copy


def _producer(source_kwargs: dict[str, Any], source_setup: list[str]) -> Callable[[str, str, list[Any]], None]:
    """A function writing the rows of a ``COPY ... TO STDOUT`` into a named pipe, in blocks of whole
    rows; an error is put into its third argument (the loading thread raises it)."""

    def produce(path: str, copy_out: str, failed: list[Any]) -> None:
        import psycopg  # noqa: PLC0415

        with open(path, "wb") as sink:  # opened first: the load's reader never waits on a failed writer
            try:
                with psycopg.connect(**source_kwargs) as src:
                    src.execute("SET TRANSACTION READ ONLY")  # the snapshot's query must not write
                    for statement in source_setup:
                        src.execute(statement)
                    with src.cursor() as cursor, cursor.copy(copy_out) as out:
                        block = bytearray()
                        for row in out:
                            block += row
                            if len(block) >= BLOCK_BYTES:
                                sink.write(block)
                                block = bytearray()
                        sink.write(block)
            except BaseException as err:
                failed.append(err)

    return produce


def _releaser() -> Callable[[str, Any], None]:
    """A function letting a writer still waiting on (or writing to) a named pipe end: it opens the
    pipe and reads what is there until the writer's thread is gone."""

    def release(path: str, writer: Any) -> None:
        import os  # noqa: PLC0415

        while writer.is_alive():
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                while True:
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        break
                    if not chunk:
                        break
            finally:
                os.close(fd)
            writer.join(0.05)

    return release


def _loader(
    dest_kwargs: dict[str, Any], dest_setup: list[str], load: str, produce: Any, release: Any
) -> Callable[[str], int]:
    """A function loading the rows of one ``COPY ... TO STDOUT`` into the destination in one
    transaction, through a named pipe in a private temporary directory; the rows loaded."""

    def pipe(copy_out: str) -> int:
        import os  # noqa: PLC0415
        import tempfile  # noqa: PLC0415
        import threading  # noqa: PLC0415

        import pymysql  # noqa: PLC0415

        folder = tempfile.mkdtemp(prefix="snaprepl-pipe-")
        path = os.path.join(folder, "rows.csv")
        os.mkfifo(path, 0o600)
        failed: list[BaseException] = []
        writer = threading.Thread(target=produce, args=(path, copy_out, failed), daemon=True)
        writer.start()
        try:
            dest = pymysql.connect(**dest_kwargs, local_infile=True, autocommit=False)
            try:
                with dest.cursor() as cursor:
                    for statement in dest_setup:
                        cursor.execute(statement)
                    rows = cursor.execute(load.format(path=path))
                writer.join()
                if failed:
                    raise failed[0]
                # LOCAL turns a value the table cannot hold into a warning (the server cannot stop the client)
                warned = dest.show_warnings()
                if warned:
                    raise pymysql.err.DataError(f"{len(warned)} or more rows did not load as sent: {warned[0][2]}")
                dest.commit()
                return int(rows)
            finally:
                dest.close()
        finally:
            release(path, writer)
            os.unlink(path)
            os.rmdir(folder)

    return pipe

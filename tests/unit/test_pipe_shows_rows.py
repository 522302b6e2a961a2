"""A bulk pipe shows the rows it writes (``seen``) only where they pass through this process as Python
values: the SQLite pipe run here does; a Spark task, or a pipe of raw COPY bytes, refuses at once."""

from __future__ import annotations

from typing import Any

import pytest

from snaprepl.dialects import DIALECTS
from snaprepl.dialects.postgres_mysql_pipe import PostgresMySqlPipe
from snaprepl.dialects.postgres_pipe import PostgresCopyPipe
from snaprepl.dialects.postgres_sqlite_pipe import PostgresSqlitePipe

TARGET: tuple[str, str, list[Any]] = ("s", "t", [])


def _pipe(kind: type, dest: str) -> Any:
    return kind(DIALECTS["postgres"], None, DIALECTS[dest], None)


@pytest.mark.parametrize(("kind", "dest"), [(PostgresCopyPipe, "postgres"), (PostgresMySqlPipe, "mysql")])
def test_a_pipe_of_raw_bytes_refuses_to_show_its_rows(kind: type, dest: str) -> None:
    assert not kind.shows_rows
    with pytest.raises(ValueError, match="shows its rows only"):
        _pipe(kind, dest)(None, "SELECT 1", [], [None], TARGET, seen=print)


def test_the_sqlite_pipe_shows_its_rows_in_this_process_only() -> None:
    assert PostgresSqlitePipe.shows_rows
    with pytest.raises(ValueError, match="shows its rows only"):
        _pipe(PostgresSqlitePipe, "sqlite")(object(), "SELECT 1", [], [None], TARGET, seen=print)

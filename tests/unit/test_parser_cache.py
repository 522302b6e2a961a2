"""The statement parser's tables, cached in the private cache directory: loaded only from a directory
and file no other user may write (lark unpickles them), rebuilt when unusable, and the parser built
from them parses as a fresh one does."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from snaprepl.common.cache_dir import CACHE_DIR_ENV, private_cache_dir, private_cache_file
from snaprepl.errors import StatementSyntaxError
from snaprepl.statements import parser

SCRIPT = "CREATE SNAPSHOT LOG FOR s@c; UPDATE SNAPSHOT \"D\"@c; CREATE SNAPSHOT x@c FROM y@d 'a, b' WHERE 'a > 1'"
NAME = "statements-grammar.lark-cache"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    directory = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(directory))
    parser._parser.cache_clear()
    yield directory
    parser._parser.cache_clear()


def _fresh_parse() -> tuple[list[object], str]:
    """The script parsed, and the error a misspelt statement gets, by a parser built anew."""
    parser._parser.cache_clear()
    with pytest.raises(StatementSyntaxError) as err:
        parser.parse_script("UPDATE SNAPSHOTS x@c")
    return parser.parse_script(SCRIPT), str(err.value)


def test_the_tables_are_cached_and_parse_as_freshly_built_ones(cache: Path) -> None:
    built = _fresh_parse()
    assert (cache / NAME).stat().st_size > 1000
    assert oct(cache.stat().st_mode & 0o777) == oct(0o700)
    stamp = (cache / NAME).stat().st_mtime_ns
    assert _fresh_parse() == built  # from the cache: not written again
    assert (cache / NAME).stat().st_mtime_ns == stamp


def test_a_damaged_cache_is_rebuilt(cache: Path) -> None:
    built = _fresh_parse()
    (cache / NAME).write_bytes(b"0" * 64 + b"\n" + b"not a pickle")
    assert _fresh_parse() == built
    first_line = (cache / NAME).read_bytes().split(b"\n", 1)[0]
    assert first_line != b"0" * 64  # rewritten with the grammar's hash


def test_a_directory_or_file_others_may_write_is_not_used(cache: Path) -> None:
    assert private_cache_dir() == cache
    os.chmod(cache, 0o777)
    assert private_cache_dir() is None
    assert private_cache_file(NAME) is None
    assert _fresh_parse()  # parses all the same, uncached
    assert not (cache / NAME).exists()
    os.chmod(cache, 0o700)
    (cache / NAME).write_bytes(b"planted")
    os.chmod(cache / NAME, 0o666)
    assert private_cache_file(NAME) is None


def test_no_home_directory_means_no_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    (tmp_path / "file").write_text("a file where the directory should be")
    assert private_cache_dir() is None

"""Collection items and the nearest enclosing collection (pure functions of the collections layer)."""

from __future__ import annotations

import pytest

from snaprepl.catalog.manifests import ManifestEntry
from snaprepl.collections.resolve import enclosing
from snaprepl.collections.stores import parse_item
from snaprepl.errors import InvalidArgument


def test_parse_item_normalises_the_collection_path() -> None:
    assert parse_item("/pub/docs/@dav1") == ("/pub/docs/", "dav1")
    assert parse_item("/pub/docs@dav1") == ("/pub/docs/", "dav1")
    assert parse_item("/@dav1") == ("/", "dav1")
    for bad in ("pub/docs/@dav1", "/pub/docs/", "/pub/../x/@dav1", "/pub/_SYS_REPL_BACKUP/@dav1", "/pub/@"):
        with pytest.raises(InvalidArgument):
            parse_item(bad)


def test_enclosing_collections_nearest_first() -> None:
    assert enclosing("/pub/", "a/b/c.txt") == ["/pub/a/b/", "/pub/a/", "/pub/"]
    assert enclosing("/pub/", "top.txt") == ["/pub/"]


def test_pending_folds_changes_against_the_last_sync() -> None:
    assert ManifestEntry("a", "s@2", "p@1").pending
    assert not ManifestEntry("a", "p@1", "p@1").pending
    assert ManifestEntry("a", "s@1", None).pending  # created since the last sync
    assert not ManifestEntry("a", "s@2", None, deleted=True).pending  # created and deleted: nothing
    assert ManifestEntry("a", "s@2", "p@1", deleted=True).pending

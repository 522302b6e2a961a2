"""Bad input to collection publications: clear errors, nothing registered, no password anywhere."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from snaprepl import api
from snaprepl.errors import InvalidArgument, SnapreplError
from tests.integration.collections.conftest import Sides
from tests.support.collections import put
from tests.support.webdav import PASSWORD


def test_missing_collection(sides: Sides, coll_catalog: Any) -> None:
    with pytest.raises(SnapreplError, match=r"/no/such/ on server dav1 .* is not a collection"):
        api.repl_create_snapshot_pub("/no/such/@dav1", 1, catalog=coll_catalog)
    assert coll_catalog.publication("/no/such/@dav1") is None


def test_url_that_is_not_webdav(sides: Sides, coll_catalog: Any) -> None:
    with pytest.raises(SnapreplError, match=r"does not answer WebDAV requests \(HTTP 501\)") as err:
        api.repl_create_snapshot_pub("/@not_dav", 1, catalog=coll_catalog)
    assert "connection 'not_dav'" in str(err.value)
    assert coll_catalog.publication("/@not_dav") is None


def test_wrong_credentials_name_no_password(
    sides: Sides, coll_catalog: Any, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    put(sides.dav1, "/bad/creds/", "a.txt", b"a")
    with caplog.at_level(logging.DEBUG), pytest.raises(SnapreplError, match="refused the credentials") as err:
        api.repl_create_snapshot_pub("/bad/creds/@dav_badpw", 1, catalog=coll_catalog)
    assert "check the login and password" in str(err.value)
    out = capsys.readouterr()
    for text in (str(err.value), repr(err.value), caplog.text, out.out, out.err):
        assert PASSWORD not in text
    assert coll_catalog.publication("/bad/creds/@dav_badpw") is None


def test_collection_nested_in_another_publication(sides: Sides, coll_catalog: Any) -> None:
    put(sides.dav1, "/nest/outer/inner/", "a.txt", b"a")
    api.repl_create_snapshot_pub("/nest/outer/@dav1", 1, catalog=coll_catalog)
    with pytest.raises(InvalidArgument, match="overlaps publication /nest/outer/@dav1"):
        api.repl_create_snapshot_pub("/nest/outer/inner/@dav1", 1, catalog=coll_catalog)
    with pytest.raises(InvalidArgument, match="overlaps"):
        api.repl_create_snapshot_pub("/nest/@dav1", 1, catalog=coll_catalog)
    assert coll_catalog.publication("/nest/outer/inner/@dav1") is None
    # A resolver outside any publication is refused; a malformed item names the expected form.
    with pytest.raises(SnapreplError, match="in no published collection"):
        api.repl_add_dav_cr("/elsewhere/@dav1", "pub_wins", catalog=coll_catalog)
    with pytest.raises(InvalidArgument, match="/path/collection/@conn_id"):
        api.repl_create_snapshot_pub("relative/path@dav1", 1, catalog=coll_catalog)
    api.repl_drop_snapshot_pub("/nest/outer/@dav1", 1, catalog=coll_catalog)
    assert coll_catalog.publication("/nest/outer/@dav1") is None

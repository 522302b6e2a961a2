"""One side of a collection publication: a local folder or a WebDAV collection, through fsspec.

A server is an Airflow connection: type ``webdav``, ``http`` or ``https`` (host: the base URL or a
host name; login and password: the credentials), or ``fs`` (extra ``path``: the root folder). Its
replication name is the connection's extra ``replication_name``, else its id. Paths of an item are
relative to that root. Credentials stay in the connection and in memory: never in the catalog, an
error or a log line.
"""

from __future__ import annotations

import posixpath
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import IO, Any

from snaprepl.connections.lookup import ConnectionInfo, get_connection
from snaprepl.errors import CollectionError, InvalidArgument, ResourceLockedError, UnsupportedConnection

BACKUP = "_SYS_REPL_BACKUP"
WEBDAV_TYPES = {"webdav", "http", "https"}
CHUNK = 1024 * 1024


def _locked(err: BaseException) -> bool:
    for e in (err, err.__cause__, err.__context__):
        if e is not None and (type(e).__name__ == "ResourceLocked" or getattr(e, "status_code", None) == 423):
            return True
    return False


@dataclass(frozen=True)
class Fingerprint:
    etag: str | None
    size: int | None
    mtime: str | None


def fingerprint(info: dict[str, Any]) -> Fingerprint:
    mtime = info.get("modified") or info.get("mtime")
    size = info.get("size") or info.get("content_length")
    return Fingerprint(info.get("etag"), int(size) if size is not None else None, None if mtime is None else str(mtime))


def replication_name(conn: ConnectionInfo) -> str:
    return str(conn.extra.get("replication_name") or conn.conn_id)


def _base_url(conn: ConnectionInfo) -> str:
    host = conn.host or ""
    if host.startswith(("http://", "https://")):
        return host.rstrip("/")
    scheme = "https" if conn.conn_type == "https" or conn.schema == "https" else "http"
    port = f":{conn.port}" if conn.port else ""
    root = str(conn.extra.get("root", "")).strip("/")
    return f"{scheme}://{host}{port}/{root}".rstrip("/")


class Store:
    """The collection ``root`` (a path ending in '/') on the server of connection ``conn``."""

    def __init__(self, conn: ConnectionInfo, root: str) -> None:
        self.conn = conn
        self.server = replication_name(conn)
        self.root = root
        self.fs, self.base = self._filesystem(conn)

    @classmethod
    def open(cls, conn_id: str, root: str) -> Store:
        return cls(get_connection(conn_id), root)

    @staticmethod
    def _filesystem(conn: ConnectionInfo) -> tuple[Any, str]:
        if conn.conn_type in WEBDAV_TYPES:
            from webdav4.fsspec import WebdavFileSystem

            auth = (conn.login, conn.password or "") if conn.login else None
            return WebdavFileSystem(_base_url(conn), auth=auth, timeout=30), ""
        if conn.conn_type == "fs":
            from fsspec.implementations.local import LocalFileSystem

            base = str(conn.extra.get("path") or conn.host or "/").rstrip("/")
            return LocalFileSystem(), base
        raise UnsupportedConnection(
            f"connection '{conn.conn_id}' has type {conn.conn_type!r}, which cannot hold a collection",
            "use a webdav (or http/https) connection with the server's URL, or an fs connection with extra path",
        )

    def where(self) -> str:
        """The collection's address, for messages (no credentials)."""
        return f"{self.root} on server {self.server} (connection '{self.conn.conn_id}')"

    def full(self, rel: str) -> str:
        return self.base + posixpath.join(self.root, rel) if rel else self.base + self.root.rstrip("/")

    @contextmanager
    def guard(self, what: str) -> Iterator[None]:
        try:
            yield
        except CollectionError:
            raise
        except FileNotFoundError:
            raise CollectionError(
                f"{self.where()} is not a collection (it does not exist)", "create it, or check the path"
            ) from None
        except Exception as err:
            if _locked(err):
                locked = ResourceLockedError(
                    f"{what}: the resource is locked at {self.where()}", "it is replicated once the lock is released"
                )
                locked.server = self.server
                raise locked from None
            raise CollectionError(f"{what} at {self.where()} failed: {_explain(err)}", _hint(err)) from None

    def check(self) -> None:
        """Raise a clear error when the collection is missing or the server is not usable."""
        with self.guard("reading the collection"):
            info = self.fs.info(self.full(""))  # raises on a server that is not WebDAV or refuses us
            if info.get("type") != "directory":
                raise CollectionError(f"{self.where()} is not a collection", "create it, or check the path")

    def listing(self) -> dict[str, Fingerprint]:
        """Every resource under the collection (depth infinity) but ``_SYS_REPL_BACKUP``, by relative path."""
        top = self.full("")
        with self.guard("listing the collection"):
            if not self.fs.isdir(top):
                raise CollectionError(f"{self.where()} is not a collection", "create it, or check the path")
            found = self.fs.find(top, detail=True, withdirs=False)
        result = {}
        for name, info in found.items():
            rel = posixpath.relpath("/" + name.lstrip("/"), "/" + top.lstrip("/"))
            if BACKUP not in rel.split("/"):
                result[rel] = fingerprint(info)
        return result

    def stat(self, rel: str) -> Fingerprint | None:
        with self.guard(f"reading {rel}"):
            try:
                info = self.fs.info(self.full(rel))
            except FileNotFoundError:
                return None
        return fingerprint(info) if info.get("type") == "file" else None

    @contextmanager
    def reader(self, rel: str) -> Iterator[IO[bytes]]:
        with self.guard(f"reading {rel}"), self.fs.open(self.full(rel), "rb") as stream:
            yield stream

    def write(self, rel: str, source: IO[bytes]) -> Fingerprint:
        """Stream ``source`` into ``rel`` through a temporary resource under ``_SYS_REPL_BACKUP`` moved
        into place, creating subcollections as needed; return the written resource's fingerprint."""
        tmp = self.stage(source)
        try:
            return self.place(tmp, rel)
        except BaseException:
            self.discard(tmp)
            raise

    def stage(self, source: IO[bytes]) -> str:
        """Stream ``source`` into a new temporary resource under ``_SYS_REPL_BACKUP/.tmp/``; return its
        path (relative to the collection)."""
        tmp = f"{BACKUP}/.tmp/{uuid.uuid4().hex}"
        with self.guard("writing a temporary copy"):
            self.fs.makedirs(posixpath.dirname(self.full(tmp)), exist_ok=True)
            with self.fs.open(self.full(tmp), "wb") as out:
                shutil.copyfileobj(source, out, CHUNK)
        return tmp

    def place(self, tmp: str, rel: str) -> Fingerprint:
        """Move resource ``tmp`` onto ``rel`` (creating subcollections); return the fingerprint there.

        :raises ResourceLockedError: ``rel`` is locked (``tmp`` is left where it is)."""
        target = self.full(rel)
        with self.guard(f"writing {rel}"):
            self.fs.makedirs(posixpath.dirname(target), exist_ok=True)
            self._move(self.full(tmp), target)
        written = self.stat(rel)
        if written is None:
            raise CollectionError(f"{rel} vanished at {self.where()} right after it was written")
        return written

    def _move(self, source: str, target: str) -> None:
        client = getattr(self.fs, "client", None)
        if client is not None:
            client.move(source, target, overwrite=True)
        else:
            self.fs.mv(source, target)

    def discard(self, rel: str) -> None:
        """Remove resource ``rel`` if it is there, quietly (a temporary copy or a backup undone)."""
        with suppress(Exception):
            self.fs.rm_file(self.full(rel))

    def backup(self, rel: str, stamp: str, origin: str) -> str:
        """Copy ``rel`` to ``_SYS_REPL_BACKUP/<rel>.<stamp>.<origin>``; return that path."""
        copy = f"{BACKUP}/{rel}.{stamp}.{origin}"
        with self.reader(rel) as stream:
            self.write(copy, stream)
        return copy

    def delete(self, rel: str) -> None:
        with self.guard(f"deleting {rel}"), suppress(FileNotFoundError):
            self.fs.rm_file(self.full(rel))


def _explain(err: BaseException) -> str:
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status is None:
        status = getattr(err, "status_code", None)
    if status in (401, 403):
        return f"the server refused the credentials (HTTP {status})"
    if status in (400, 405, 501):
        return f"the URL does not answer WebDAV requests (HTTP {status})"
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return f"{type(err).__name__}: {text}"


def _hint(err: BaseException) -> str | None:
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status in (401, 403):
        return "check the login and password of the connection"
    return "check that the connection's URL is a WebDAV collection and the server is reachable"


def parse_item(item: str) -> tuple[str, str]:
    """``/path/coll/@conn_id`` → (``/path/coll/``, ``conn_id``)."""
    path, sep, conn_id = str(item).rpartition("@")
    if not sep or not conn_id or not path.startswith("/"):
        raise InvalidArgument(
            f"a type 1 publication is a collection of files: {item!r} is not written as /path/collection/@conn_id",
            "name the collection by its absolute path on the server, then '@' and the connection id",
        )
    if ".." in path.split("/") or BACKUP in path.split("/"):
        raise InvalidArgument(f"collection {item!r} is not a path snaprepl can replicate")
    return posixpath.normpath(path).rstrip("/") + "/", conn_id


def same_body(one: Store, other: Store, rel: str) -> bool:
    """Whether ``rel`` has the same body on both sides (compared chunk by chunk, never whole)."""
    with one.reader(rel) as a, other.reader(rel) as b:
        while True:
            chunk = a.read(CHUNK)
            if chunk != b.read(len(chunk) or 1):
                return False
            if not chunk:
                return True


def ensure_collection(store: Store) -> None:
    """Create the collection (and its parents) on ``store``'s server if it is missing."""
    with store.guard("creating the collection"):
        store.fs.makedirs(store.full(""), exist_ok=True)

"""Helpers of the collection tests: files written straight into a server's folder, and trees by hash."""

from __future__ import annotations

import hashlib
import itertools
import os
from pathlib import Path

BACKUP = "_SYS_REPL_BACKUP"
#: A clock moving one second per write: WebDAV ETags and modification times (wsgidav's) have a
#: resolution of one second, and people do not edit a resource twice a second with the same size.
_CLOCK = itertools.count(1_800_000_000)


def put(root: Path, coll: str, rel: str, body: bytes) -> None:
    path = root / coll.strip("/") / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    now = next(_CLOCK)
    os.utime(path, (now, now))


def remove(root: Path, coll: str, rel: str) -> None:
    (root / coll.strip("/") / rel).unlink(missing_ok=True)


def tree(root: Path, coll: str) -> dict[str, str]:
    """Every resource of the collection but its backups: relative path → sha256 of the body."""
    top = root / coll.strip("/")
    return {
        p.relative_to(top).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(top.rglob("*"))
        if p.is_file() and BACKUP not in p.relative_to(top).parts
    }


def backups(root: Path, coll: str) -> dict[str, bytes]:
    """The backup copies of the collection: path under _SYS_REPL_BACKUP → body (temporaries left out)."""
    top = root / coll.strip("/") / BACKUP
    if not top.exists():
        return {}
    return {
        p.relative_to(top).as_posix(): p.read_bytes()
        for p in sorted(top.rglob("*"))
        if p.is_file() and ".tmp" not in p.relative_to(top).parts
    }

"""Conflict resolution of collections: resolvers of the nearest enclosing collection that has any.

A resolver is ``pub_wins``, ``sub_wins`` or the import path ``package.module:function`` of a function
called with keywords ``path`` (relative to the publication), ``incoming`` and ``current`` (the
resources' properties: version, ETag, size, mtime), ``origin`` (the incoming side's server) and
``open_incoming`` (a context manager reading the incoming body: the one waiting on a lock, if it
waited); it returns 0 (undecided, next resolver), 1 (subscriber wins) or 3 (publisher wins).
Undecided at the end: publisher wins.
"""

from __future__ import annotations

import importlib
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from snaprepl.catalog.manifests import DavResolver
from snaprepl.catalog.store import Catalog
from snaprepl.errors import InvalidArgument, ReplicationError

SUB_WINS, PUB_WINS = 1, 3
CLASSES = {"pub_wins": PUB_WINS, "sub_wins": SUB_WINS}


@dataclass(frozen=True)
class Decision:
    code: int
    resolver: str
    notify_email: str | None = None
    notify_text: str | None = None


def enclosing(root: str, rel: str) -> list[str]:
    """Collections enclosing ``rel`` (relative to ``root``), nearest first, up to ``root``."""
    parts = posixpath.dirname(rel).split("/") if posixpath.dirname(rel) else []
    return [root + "".join(p + "/" for p in parts[:n]) for n in range(len(parts), -1, -1)]


def nearest_resolvers(catalog: Catalog, root: str, conn_id: str, rel: str) -> list[DavResolver]:
    for collection in enclosing(root, rel):
        found = catalog.dav_resolvers(f"{collection}@{conn_id}")
        if found:
            return found
    return []


def load(klass: str) -> Callable[..., Any]:
    module_name, sep, name = klass.partition(":")
    if not sep:
        raise InvalidArgument(
            f"collection resolver {klass!r} is unknown", "use pub_wins, sub_wins or package.module:function"
        )
    try:
        return getattr(importlib.import_module(module_name), name)  # type: ignore[no-any-return]
    except (ImportError, AttributeError) as err:
        raise InvalidArgument(f"collection resolver {klass!r} cannot be loaded: {err}") from None


def decide(resolvers: list[DavResolver], **facts: Any) -> Decision:
    for r in resolvers:
        code = CLASSES.get(r.klass)
        if code is None:
            code = load(r.klass)(**facts)
        if code in (SUB_WINS, PUB_WINS):
            return Decision(code, f"{r.collection}#{r.order}:{r.klass}", r.notify_email, r.notify_text)
        if code != 0:
            raise ReplicationError(
                f"collection resolver {r.klass} returned {code!r}", "a collection resolver returns 0, 1 or 3"
            )
    email = resolvers[0].notify_email if resolvers else None
    return Decision(PUB_WINS, "default", email, resolvers[0].notify_text if resolvers else None)

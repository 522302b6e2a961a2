"""snaprepl's cache directory: files it can always rebuild, kept to save a command's start-up work."""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the cache directory (default ``$XDG_CACHE_HOME/snaprepl``).
CACHE_DIR_ENV = "SNAPREPL_CACHE_DIR"


def private_cache_dir() -> Path | None:
    """``$SNAPREPL_CACHE_DIR``, else ``$XDG_CACHE_HOME/snaprepl``, else ``~/.cache/snaprepl``, made
    if missing (this user only); None where it cannot be made or others may write to it: what is
    cached there is loaded as code (pickled parser tables), so it must be this user's alone."""
    given = os.environ.get(CACHE_DIR_ENV)
    try:
        base = Path(given) if given else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "snaprepl"
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        found = base.stat()
    except (OSError, RuntimeError):  # RuntimeError: no home directory to expand
        return None
    if found.st_uid != os.getuid() or found.st_mode & 0o022:
        return None
    return base


def private_cache_file(name: str) -> str | None:
    """The path of cache file ``name`` in :func:`private_cache_dir`, or None where nothing may be
    cached (no such directory, or the file is another user's or writable by others)."""
    base = private_cache_dir()
    if base is None:
        return None
    path = base / name
    try:
        found = path.stat()
    except FileNotFoundError:
        return str(path)
    except OSError:
        return None
    return str(path) if found.st_uid == os.getuid() and not found.st_mode & 0o022 else None

"""Spark Connect mode: a job runs in its caller's process against a long-running Spark Connect server.

The caller (the CLI, the Python API, an Airflow task) runs the job module's own ``main`` with the
same arguments spark-submit would have given it; the job's SparkSession is a Connect session, its
connections are handed over in memory and its result comes back in memory (see :func:`run_job`).

Sessions are precious: in pyspark 4.2.0 the server keeps a Python worker pool per session and never
frees it (SPARK-54055). So a process keeps one session per server (a cache keyed by URL), and the
session's id belongs to a *slot* of that server in the state directory: a process takes the first
free slot (a lock held while it lives) and reuses the slot's session id, so the processes that follow
each other in one Airflow worker slot share one server session. Sessions are never released; one the
server closed (idle timeout) is replaced by a new id (``SESSION_CLOSED``).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import importlib
import logging
import os
import socket
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse, urlunparse

from snaprepl.connections.lookup import ConnectionInfo, get_connection, handed
from snaprepl.errors import ConnectServerDown, SnapreplError
from snaprepl.spark.entrypoint import RESULT_SINK
from snaprepl.spark.session import SPARK_CONF, remote

log = logging.getLogger(__name__)

#: Environment variable naming snaprepl's state directory (Connect slots, the local server's files).
STATE_DIR_ENV = "SNAPREPL_STATE_DIR"
#: Most slots (concurrent processes) per server; more concurrent jobs fail with a clear error.
MAX_SLOTS = 256
#: Error classes of a session the server no longer has.
_GONE = ("SESSION_CLOSED", "SESSION_CHANGED", "SESSION_NOT_FOUND")

_SESSIONS: dict[str, Any] = {}
_SLOTS: dict[str, tuple[int, Path]] = {}


def state_dir() -> Path:
    """snaprepl's state directory (readable by this user only): ``$SNAPREPL_STATE_DIR``, else
    ``$XDG_STATE_HOME/snaprepl``, else ``~/.local/state/snaprepl``."""
    given = os.environ.get(STATE_DIR_ENV)
    base = Path(given) if given else Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local/state") / "snaprepl"
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    return base


def connection_url(conn_id: str) -> str:
    """The ``sc://`` URL of Airflow connection ``conn_id`` (type ``spark_connect``), as the Spark
    provider's ``SparkConnectHook.get_connection_url`` builds it: host, port, ``user_id`` (the login),
    ``token`` (the password), ``use_ssl`` (an extra).

    Built here from :func:`~snaprepl.connections.lookup.get_connection`, which reads a connection of the
    environment without importing Airflow (the hook would, a second or more of every command).
    """
    return spark_connect_url(get_connection(conn_id))


def spark_connect_url(conn: ConnectionInfo) -> str:
    """The ``sc://`` URL of Spark Connect connection ``conn`` (the provider hook's rules)."""
    if not conn.host:
        raise SnapreplError(
            f"the Spark Connect connection '{conn.conn_id}' has no host",
            'set its host and port, e.g. {"conn_type": "spark_connect", "host": "localhost", "port": 15002}',
        )
    host = conn.host if "://" in conn.host else f"sc://{conn.host}"
    if conn.port:
        host = f"{host}:{conn.port}"
    url = urlparse(host)
    if url.path:
        raise SnapreplError(f"the Spark Connect connection '{conn.conn_id}' has a path ({url.path}): it takes none")
    params = []
    if conn.login:
        params.append(f"user_id={quote(conn.login)}")
    if conn.password:
        params.append(f"token={quote(conn.password)}")
    use_ssl = conn.extra.get("use_ssl")
    if use_ssl is not None:
        params.append(f"use_ssl={quote(str(use_ssl))}")
    return urlunparse(("sc", url.netloc, "/", ";".join(params), "", url.fragment))


def session_for(url: str, conn_id: str) -> Any:
    """This process's Connect session with the server at ``url`` (opened on first use).

    :raises ConnectServerDown: naming ``conn_id`` and how to start a server.
    """
    cached = _SESSIONS.get(url)
    if cached is not None and not cached.is_stopped:
        return cached
    check_reachable(url, conn_id)
    # pyspark's functions (F.col, ...) build Connect columns only when this says so: a process that
    # runs jobs on a Connect server has no JVM of its own.
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    id_file = _take_slot(url)
    for attempt in range(2):
        session = _open(url, _slot_session_id(id_file, rotate=attempt > 0))
        try:
            session.conf.set("spark.sql.session.timeZone", "UTC")  # the first call: the session exists now
        except Exception as err:
            _close_quietly(session)
            if attempt == 0 and _gone(err):
                log.info("the server closed this slot's Spark Connect session: opening a new one")
                continue
            why = "its token was refused" if "UNAUTHENTICATED" in str(err) else _first_line(err)
            raise ConnectServerDown(
                f"the Spark Connect server of connection '{conn_id}' refused a session: {why}",
                "check the connection's token, or see the server's log (`snaprepl spark-server status`)",
            ) from None
        runtime = {k: v for k, v in SPARK_CONF.items() if k.startswith("spark.sql.")}
        session.conf._set_all(configs=runtime, silent=True)  # static settings are the server's own
        _SESSIONS[url] = session
        # Exit handlers run last-registered first: this one now runs before the one pyspark registered
        # for the new client, which then finds it closed and skips its request (an ML cache cleanup,
        # up to a few tenths of a second of every command's exit; snaprepl caches no ML models).
        atexit.register(_close_all)
        return session
    raise AssertionError("unreachable")


def forget(url: str, *, rotate: bool = False) -> None:
    """Drop this process's session with ``url`` (the next job opens one again); ``rotate``: give the
    slot a new session id too (the server closed the old one)."""
    session = _SESSIONS.pop(url, None)
    if session is not None:
        _close_quietly(session)
    if rotate and url in _SLOTS:
        _slot_session_id(_SLOTS[url][1], rotate=True)


def interrupt(url: str, tag: str) -> list[str]:
    """Interrupt the operations tagged ``tag`` on this process's session with ``url``; their ids."""
    session = _SESSIONS.get(url)
    if session is None:
        return []
    try:
        return list(session.interruptTag(tag))
    except Exception as err:  # the server went away: nothing runs there any more
        log.warning("could not interrupt %s: %s", tag, _first_line(err))
        return []


def run_job(
    module: str, argv: Sequence[str], *, url: str, tag: str, connections: Iterable[ConnectionInfo], conn_id: str
) -> dict[str, Any] | None:
    """Run job module ``module``'s ``main(argv)`` here, on this process's session with ``url``, its
    operations tagged ``tag``; return its result as spark-submit's result file would carry it.

    The job module is named, like spark-submit's application, not imported by this layer: it is the
    caller's job (``snaprepl.refresh.job``, ``snaprepl.bidir.job``). A run left by an exception
    (Ctrl-C, a task's kill) has its operations interrupted on the server. When the submission did not
    open the session (:func:`check_reachable` only, a verify), the job opens it on first use: one that
    needs no Spark (its databases' sums agree) pays neither pyspark's import nor the session's requests.
    """
    job = importlib.import_module(module)
    sink: dict[str, Any] = {}
    token = RESULT_SINK.set(sink)
    tagged: list[Any] = []

    def session() -> Any:
        if not tagged:
            tagged.append(session_for(url, conn_id))
            tagged[0].addTag(tag)  # the tags are the calling thread's
        return tagged[0]

    if url in _SESSIONS:
        session()  # opened by the submission: tagged in this thread, as every job's operations are
    try:
        with handed(connections), remote(session):
            job.main(list(argv))
    except BaseException:
        interrupt(url, tag)
        raise
    finally:
        RESULT_SINK.reset(token)
        for opened in tagged:
            with contextlib.suppress(Exception):
                opened.removeTag(tag)
    error = (sink.get("error") or {}).get("message") or ""
    if any(gone in str(error) for gone in _GONE):
        forget(url, rotate=True)
    return sink or None


def _open(url: str, session_id: str) -> Any:
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    session = ConnectSession(connection=f"{url.rstrip(';')};session_id={session_id}")
    session.release_session_on_close = False  # the session outlives this process: its slot's next one reuses it
    return session


def check_reachable(url: str, conn_id: str) -> None:
    """Fail at once (pyspark would retry for minutes) when nothing listens at ``url``."""
    parsed = urlparse(url.replace("sc://", "http://", 1))
    host, port = parsed.hostname or "localhost", parsed.port or 15002
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as err:
        raise ConnectServerDown(
            f"the Spark Connect server of connection '{conn_id}' ({host}:{port}) does not answer: "
            f"{err.strerror or err}",
            "start one with `snaprepl spark-server start` (or set [snaprepl] connect_fallback = true)",
        ) from None


def _take_slot(url: str) -> Path:
    """Lock this process's slot of the server at ``url`` (held until the process ends); its id file."""
    if url in _SLOTS:
        return _SLOTS[url][1]
    parsed = urlparse(url.replace("sc://", "http://", 1))
    directory = state_dir() / "connect-slots" / f"{parsed.hostname}_{parsed.port or 15002}"
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    for number in range(MAX_SLOTS):
        fd = os.open(directory / f"slot-{number}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _SLOTS[url] = (fd, directory / f"slot-{number}.id")
        return _SLOTS[url][1]
    raise SnapreplError(f"{MAX_SLOTS} processes already use the Spark Connect server {parsed.hostname}")


def _slot_session_id(id_file: Path, *, rotate: bool) -> str:
    """The slot's session id (a new one on ``rotate`` or on first use)."""
    if not rotate:
        with contextlib.suppress(FileNotFoundError, ValueError):
            return str(uuid.UUID(id_file.read_text().strip(), version=4))
    new = str(uuid.uuid4())
    id_file.write_text(new)
    return new


def _gone(err: BaseException) -> bool:
    return any(gone in str(err) for gone in _GONE)


@atexit.register
def _close_all() -> None:
    """Close the sessions' channels before the interpreter winds down (closing one from a session's
    ``__del__`` at exit hangs in gRPC); the sessions stay on the server for the slot's next process."""
    for url in list(_SESSIONS):
        _close_quietly(_SESSIONS.pop(url))


def _close_quietly(session: Any) -> None:
    with contextlib.suppress(Exception):
        session.release_session_on_close = False
        session.client.close()


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]

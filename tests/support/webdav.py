"""Real WebDAV servers for the collection tests: wsgidav on cheroot, on loopback, in a thread.

Each server serves a temporary folder, asks for HTTP basic credentials and stops when the context
ends. ``plain_http`` is an HTTP server that is not WebDAV (for the bad-input tests).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

USER, PASSWORD = "repl", "s3cret-Pa55word"


@dataclass(frozen=True)
class DavServer:
    url: str
    root: Path


@contextmanager
def webdav_server(root: Path) -> Iterator[DavServer]:
    from cheroot import wsgi
    from wsgidav.wsgidav_app import WsgiDAVApp

    config = {
        "host": "127.0.0.1",
        "port": 0,
        "provider_mapping": {"/": str(root)},
        "simple_dc": {"user_mapping": {"*": {USER: {"password": PASSWORD}}}},
        "http_authenticator": {"accept_basic": True, "accept_digest": False, "default_to_digest": False},
        "verbose": 0,
        "logging": {"enable": False, "enable_loggers": []},
        "lock_storage": True,
    }
    app = WsgiDAVApp(config)
    server = wsgi.Server(("127.0.0.1", 0), app, numthreads=4)
    server.prepare()
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield DavServer(f"http://127.0.0.1:{server.bind_addr[1]}", root)
    finally:
        server.stop()
        thread.join(10)


@contextmanager
def plain_http(root: Path) -> Iterator[str]:
    class Quiet(SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


_LOCKINFO = (
    '<?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>'
    "<D:locktype><D:write/></D:locktype><D:owner>a person editing</D:owner></D:lockinfo>"
)


@contextmanager
def dav_lock(url: str) -> Iterator[str]:
    """Hold a WebDAV exclusive write LOCK on resource ``url`` (as another client would); UNLOCK at the end."""
    import httpx

    answer = httpx.request(
        "LOCK", url, content=_LOCKINFO, headers={"Depth": "0", "Timeout": "Second-600"}, auth=(USER, PASSWORD)
    )
    assert answer.status_code in (200, 201), answer.text
    token = answer.headers["Lock-Token"]
    try:
        yield token
    finally:
        httpx.request("UNLOCK", url, headers={"Lock-Token": token}, auth=(USER, PASSWORD)).raise_for_status()

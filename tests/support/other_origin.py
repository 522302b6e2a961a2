"""Pages served from another origin, as another web app on the host (or another site) would serve them.

:func:`serve` runs a tiny ``http.server`` on a free loopback port; reach it as ``http://127.0.0.1:<port>``
(another origin of the same site as an api-server at 127.0.0.1) or ``http://localhost:<port>``
(another site). :func:`forgery_pages` are what such a page can do to a writing URL with the
visitor's cookies: simple and no-CORS ``fetch`` calls, a preflighted one, and auto-submitting forms.
"""

from __future__ import annotations

import html
import http.server
import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

#: Requests :func:`forgery_pages` makes reach the server (the preflighted fetch never does).
SENT_PER_ORIGIN = 4


@contextmanager
def serve(pages: Mapping[str, str]) -> Iterator[int]:
    """Serve ``pages`` (path: HTML) on 127.0.0.1; yields the port."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            page = pages.get(self.path.split("?", 1)[0])
            body = (page or "not found").encode()
            self.send_response(200 if page is not None else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def forgery_pages(target: str) -> dict[str, str]:
    """``/fetch.html`` (its title becomes ``done ...`` when its three fetches settled), ``/form.html``
    and ``/text-form.html`` (a form posting JSON-looking text/plain), both submitting themselves."""
    url, attribute = json.dumps(target), html.escape(target, quote=True)
    fetches = f"""<script>
const url = {url};
Promise.allSettled([
  fetch(url, {{method: "POST", mode: "no-cors", credentials: "include",
               headers: {{"Content-Type": "text/plain"}}, body: '{{"complete": true}}'}}),
  fetch(url, {{method: "POST", credentials: "include", body: new URLSearchParams({{complete: "true"}})}}),
  fetch(url, {{method: "POST", credentials: "include", body: "{{}}",
               headers: {{"Content-Type": "application/json", "X-Snaprepl-Request": "1"}}}}),
]).then(results => {{ document.title = "done " + results.map(r => r.status).join(" "); }});
</script>"""
    submit = "<script>document.forms[0].submit();</script>"
    return {
        "/fetch.html": f"<!doctype html><title>fetching</title>{fetches}",
        "/form.html": f'<!doctype html><form method="post" action="{attribute}">'
        f'<input name="complete" value="true"></form>{submit}',
        "/text-form.html": f'<!doctype html><form method="post" enctype="text/plain" action="{attribute}">'
        f'<input name=\'{{"complete": true, "x": "\' value=\'"}}\'></form>{submit}',
    }

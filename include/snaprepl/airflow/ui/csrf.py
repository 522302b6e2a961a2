"""Cross-site request forgery protection of the page's writing routes (every method but GET/HEAD/OPTIONS).

The UI's session cookie (``_token``) is an ambient credential: the browser attaches it to any
request to the api-server, also one a page of another site (or of another port on the same host,
which is the same *site*) makes with an auto-submitting form, an ``<img>`` or a simple ``fetch``.
:func:`forbid_cross_site` is a dependency of the whole app (so of every route, also of one added
later) and, for a writing request, lets through only:

- a request that carries ``Authorization: Bearer`` (an API client: Airflow then authenticates it by
  that token, never by the cookie, and a browser never adds such a header on its own), or
- a request a form, an ``<img>`` or a no-CORS ``fetch`` cannot make: ``Content-Type:
  application/json`` and the :data:`PAGE_HEADER` header (both force a CORS preflight, which the
  api-server does not grant to other origins), whose ``Origin`` (else ``Referer``) is the
  api-server's own origin (:func:`own_origin`).

Anything else gets 403 before authentication, so no run is created, and one warning line naming
the method, the path and the reason (never a cookie or a token).
"""

from __future__ import annotations

import logging
import urllib.parse

from airflow.configuration import conf
from fastapi import HTTPException, Request, status

#: Methods that never change anything (the app's GET routes only read).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: The header the page's script sets on its writing requests (any non-empty value).
PAGE_HEADER = "X-Snaprepl-Request"
DEFAULT_PORTS = {"http": 80, "https": 443}

log = logging.getLogger(__name__)


def origin_of(url: str) -> str | None:
    """``scheme://host:port`` of ``url``, lower-cased, with the scheme's default port made explicit;
    ``None`` for anything that has no such origin (``null``, a path, a malformed URL)."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError:
        return None
    if scheme not in DEFAULT_PORTS or not host:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port or DEFAULT_PORTS[scheme]}"


def configured_base_url() -> str:
    """Airflow's ``[api] base_url`` (empty when it is not set)."""
    return str(conf.get("api", "base_url", fallback="") or "")


def own_origin(request: Request) -> str | None:
    """The origin the api-server's pages are served from, which the page's own requests carry.

    ``[api] base_url`` when it is set (the address users reach Airflow by, e.g. behind a proxy);
    otherwise the request's scheme (as uvicorn saw it: ``X-Forwarded-Proto`` counts only with
    ``airflow api-server --proxy-headers``) and its ``Host`` header, which a browser always sets to
    the address it sends the request to and a page cannot change.
    """
    base = configured_base_url()
    if base:
        return origin_of(base)
    host = request.headers.get("host", "")
    return origin_of(f"{request.url.scheme}://{host}") if host else None


def is_bearer(request: Request) -> bool:
    """Whether Airflow authenticates this request by an ``Authorization: Bearer`` token (``get_user``
    prefers it to the cookie)."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and bool(token.strip())


def refusal(request: Request) -> str | None:
    """Why ``request`` may not reach a route (``None``: it may)."""
    if request.method.upper() in SAFE_METHODS or is_bearer(request):
        return None
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        return f"Content-Type is {media or 'missing'}, not application/json"
    if not request.headers.get(PAGE_HEADER, "").strip():
        return f"no {PAGE_HEADER} header"
    source, sent = "Origin", request.headers.get("origin")
    if sent is None:
        source, sent = "Referer", request.headers.get("referer")
    if sent is None:
        return "neither Origin nor Referer"
    own = own_origin(request)
    if own is None or origin_of(sent) != own:
        return f"{source} {sent[:200]!r} is not the api-server's own origin {own!r}"
    return None


async def forbid_cross_site(request: Request) -> None:
    """403 for a writing request another site could have made in the user's name (see the module)."""
    reason = refusal(request)
    if reason is None:
        return
    log.warning("snaprepl: refused %s %s (cross-site request protection): %s", request.method, request.url.path, reason)
    raise HTTPException(
        status.HTTP_403_FORBIDDEN,
        f"refused: {reason}. The Replication page's buttons send a same-origin JSON request with the "
        f"{PAGE_HEADER} header; API clients authenticate with Authorization: Bearer.",
    )

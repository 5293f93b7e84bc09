"""Plain HTTP answered during the websocket opening handshake (websockets' ``process_request``).

* ``GET /healthz`` — 200 and a JSON report while the database answers, else 503.
* ``GET /presence`` — who is online and on which games, cluster-wide (several hub processes
  only; 503 while the cluster state is unreachable).
* ``GET /api/games…`` — the review API (:mod:`server.transport.review`), when a store is given.
* ``GET /api/variants`` — the variant catalogue (:mod:`server.transport.catalogue`).
* ``GET /``, ``GET /static/<file>`` — the bundled web client (built from ``web/``, files read
  once at start); ``GET /game/<id>`` and the client's other page routes serve its
  ``index.html`` too, so a shared link or a reload opens the same page.
* ``GET <ws_path>`` — continues the websocket handshake (a request without ``Upgrade`` gets
  websockets' own 426 answer).
* anything else — 404.
"""

from __future__ import annotations

import email.utils
import http
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.transport.addresses import client_address
from server.transport.catalogue import CATALOGUE_PATH, catalogue
from server.transport.codec import encode
from server.transport.headers import SECURITY_HEADERS
from server.transport.review import ReviewStore, is_review_path, review_http_target
from server.transport.review_reads import ReviewReads, address_key

__all__ = ["STATIC_DIR", "HealthCheck", "HttpRoutes", "load_static"]

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"

# The reports are typed by the layers that build them (``server.app.HealthReport``,
# ``server.cluster.node.PresenceReport``), which transport may not import; it only encodes them,
# so any JSON object will do here.
HealthCheck = Callable[[], Awaitable[tuple[bool, Mapping[str, object]]]]
"""Returns (healthy, report); the report is sent as JSON with 200 or 503."""

PresenceLookup = Callable[[], Awaitable[Mapping[str, object]]]
"""Returns who is online and on which games; raises an exception when it cannot tell."""

_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
}

#: Page routes of the single-page client: ``/game/<id>`` (a game, ``#<ply>`` in the fragment),
#: ``/review``, ``/player/<name>``, ``/tournaments``, ``/tournament/<id>``; they all answer the
#: client's ``index.html``.
_PAGE_PREFIXES = ("/game/", "/player/", "/tournament/")
_PAGES = ("/review", "/lobby", "/tournaments")


def _is_page(path: str) -> bool:
    """A page route of the client: ``/review``, or ``/game/<id>`` with one non-empty segment."""
    if path in _PAGES:
        return True
    for prefix in _PAGE_PREFIXES:
        rest = path.removeprefix(prefix)
        if rest != path and rest and "/" not in rest:
            return True
    return False


def load_static(directory: Path = STATIC_DIR) -> dict[str, tuple[bytes, str]]:
    """URL path → (body, content type) for the web client's files; ``/`` is ``index.html``."""
    files: dict[str, tuple[bytes, str]] = {}
    if not directory.is_dir():
        return files
    for path in sorted(directory.iterdir()):
        content_type = _CONTENT_TYPES.get(path.suffix)
        if path.is_file() and content_type is not None:
            files[f"/static/{path.name}"] = (path.read_bytes(), content_type)
    if "/static/index.html" in files:
        files["/"] = files["/static/index.html"]
    return files


def response(
    status: http.HTTPStatus, body: bytes, content_type: str, retry_after_s: int | None = None
) -> Response:
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", content_type),
            ("Cache-Control", "no-cache"),
        ]
    )
    if retry_after_s is not None:
        headers["Retry-After"] = str(retry_after_s)
    return Response(status.value, status.phrase, headers, body)


def peer_address(connection: ServerConnection) -> str:
    """The client address a websocket-server connection comes from (the one place this door
    reads it: :func:`~server.transport.addresses.client_address`, a trusted balancer's PROXY
    header honoured)."""
    return client_address(connection.transport)


class HttpRoutes:
    """The ``process_request`` hook (see the module docstring)."""

    def __init__(
        self,
        ws_path: str,
        health: HealthCheck,
        static: Mapping[str, tuple[bytes, str]] | None = None,
        review_store: ReviewStore | None = None,
        presence: PresenceLookup | None = None,
        reads: ReviewReads | None = None,
    ) -> None:
        self._ws_path = ws_path
        self.reads = reads
        """The stored-game reads' cache, gate and limits (:mod:`server.transport.review_reads`)."""
        self._health = health
        self._presence = presence
        self._review_store = review_store
        self._static = dict(load_static() if static is None else static)
        self._catalogue = encode(catalogue()) + b"\n"

    @staticmethod
    def secured(connection: ServerConnection, request: Request, response: Response) -> None:
        """websockets' ``process_response`` hook: every answer but the websocket's own ``101``
        carries :data:`~server.transport.headers.SECURITY_HEADERS` (websockets' own refusals,
        such as the ``426`` of a plain GET of the websocket path, included)."""
        if response.status_code == http.HTTPStatus.SWITCHING_PROTOCOLS:
            return
        for name, value in SECURITY_HEADERS:
            if name not in response.headers:
                response.headers[name] = value

    async def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        answer = await self.answer(request.path, address_key(peer_address(connection)))
        if answer is None:
            return None
        status, body, content_type = answer
        return response(http.HTTPStatus(status), body, content_type, self.retry_after(status))

    def retry_after(self, status: int) -> int | None:
        """The ``Retry-After`` of an answer: the stored-game reads' wait on a 429."""
        return self.reads.retry_after_s if status == 429 and self.reads is not None else None

    async def answer(
        self, target: str, requester: str | None = None
    ) -> tuple[int, bytes, str] | None:
        """(status, body, content type) for a GET of ``target`` (path and query), or ``None``
        for the websocket path (the handshake goes on). The HTTP API's connections ask this
        too, for a page requested on a connection it kept alive. ``requester`` (an address key)
        is whose stored-game reads are counted (:mod:`server.transport.review_reads`)."""
        path = target.split("?", 1)[0]
        if path == self._ws_path:
            return None
        if path == "/healthz":
            return await self._healthz()
        if path == "/presence" and self._presence is not None:
            return await self._presence_report(self._presence)
        if self._review_store is not None and is_review_path(path):
            status, content_type, body = await review_http_target(
                self._review_store, target, self.reads, requester
            )
            return status, body, content_type
        if path == CATALOGUE_PATH:
            return 200, self._catalogue, "application/json"
        if _is_page(path):
            path = "/"
        found = self._static.get(path)
        if found is not None:
            body, content_type = found
            return 200, body, content_type
        return 404, b"Not found.\n", "text/plain; charset=utf-8"

    async def _presence_report(self, presence: PresenceLookup) -> tuple[int, bytes, str]:
        try:
            report = await presence()
        except Exception as error:
            logger.warning("presence report failed: %s", error)
            body = encode({"error": "presence is unavailable"}) + b"\n"
            return 503, body, "application/json"
        return 200, encode(dict(report)) + b"\n", "application/json"

    async def _healthz(self) -> tuple[int, bytes, str]:
        try:
            healthy, report = await self._health()
        except Exception:
            logger.exception("health check failed")
            healthy, report = False, {"status": "error"}
        return (200 if healthy else 503), encode(dict(report)) + b"\n", "application/json"

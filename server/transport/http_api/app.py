"""The aiohttp application of the HTTP API, built from its route modules.

Each area is a module with a ``routes`` table (:data:`ROUTE_MODULES`); a new area adds its
module there and its path prefix to :data:`~server.transport.http_api.paths.API_PREFIXES` (what the public listener hands to
this application rather than to the websocket server).

Every error is answered the lichess way, a status and ``{"error": "…"}``: the handlers' own
(:func:`~server.transport.http_api.context.api_error`), aiohttp's (404, 405, 413 …) and a bug
(500, logged).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from types import ModuleType

from aiohttp import web

from server.transport.http_api import (
    account,
    analysis,
    bot,
    challenges,
    export,
    fishnet,
    pages,
    streams,
    tokens,
)
from server.transport.http_api.context import CONTEXT, ApiContext, ApiError
from server.transport.http_api.lichess import ErrorAnswer
from server.transport.http_api.paths import API_PREFIXES, is_api_path

__all__ = ["API_PREFIXES", "MAX_BODY_BYTES", "ROUTE_MODULES", "build_application", "is_api_path"]

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024
"""Largest request body read (a bigger one is a 413): an engine worker's analysis of a long game
(every ply with its principal variation) runs to a few hundred KiB."""

ROUTE_MODULES: tuple[ModuleType, ...] = (
    tokens,
    account,
    streams,
    bot,
    challenges,
    export,
    fishnet,
    analysis,
)
"""The areas of the API, each a module with a ``routes`` table (``web.RouteTableDef``)."""


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def lichess_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Errors as ``{"error": "…"}`` with their status."""
    try:
        return await handler(request)
    except ApiError as error:
        return _refusal(error.status, error.message, error.headers)
    except web.HTTPException as error:
        if error.status < 400:
            raise
        return _refusal(error.status, error.reason, _allow(error))
    except Exception:
        logger.exception("HTTP API failed on %s %s", request.method, request.path)
        return _refusal(500, "Internal server error.")


def _refusal(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    body: ErrorAnswer = {"error": message}
    return web.json_response(body, status=status, headers=headers)


def _allow(error: web.HTTPException) -> dict[str, str]:
    allow = error.headers.get("Allow")
    return {"Allow": allow} if allow else {}


def build_application(context: ApiContext) -> web.Application:
    """The application: the route modules' routes, then the plain pages as a fallback."""
    app = web.Application(middlewares=[lichess_errors], client_max_size=MAX_BODY_BYTES)
    app[CONTEXT] = context
    for module in ROUTE_MODULES:
        app.add_routes(module.routes)
    app.add_routes(pages.routes)  # last: it matches every path
    return app

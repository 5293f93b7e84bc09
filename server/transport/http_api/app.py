"""The aiohttp application of the HTTP API, built from its route modules.

Each area is a module with a ``routes`` table (:data:`ROUTE_MODULES`); a new area adds its
module there and its path prefix to :data:`~server.transport.http_api.paths.API_PREFIXES` (what the public listener hands to
this application rather than to the websocket server).

Every error is answered the lichess way, a status and ``{"error": "…"}``: the handlers' own
(:func:`~server.transport.http_api.context.api_error`), aiohttp's (404, 405, 413 …) and a bug
(500, logged with its traceback). What a client can cause — a body that does not come in time
(408), a body cut off by the client going away — is logged as one INFO line
(:func:`whole_bodies`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from types import ModuleType

from aiohttp import web
from aiohttp.http_exceptions import PayloadEncodingError

from server.transport.addresses import client_address
from server.transport.headers import SECURITY_HEADERS, SERVER_NAME
from server.transport.http_api import (
    account,
    analysis,
    bot,
    challenges,
    export,
    fishnet,
    pages,
    streams,
    swiss,
    tokens,
    tournaments,
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
    tournaments,
    swiss,
)
"""The areas of the API, each a module with a ``routes`` table (``web.RouteTableDef``)."""


RequestHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]
"""The next handler a middleware calls with the request."""


@web.middleware
async def lichess_errors(request: web.Request, handler: RequestHandler) -> web.StreamResponse:
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


@web.middleware
async def whole_bodies(request: web.Request, handler: RequestHandler) -> web.StreamResponse:
    """Read a request's whole body before its handler runs, within ``body_timeout_s`` (a body
    trickled byte by byte, or announced and never sent, would hold the connection and the
    handler for ever), so that no handler meets a slow or broken body: a body late is a 408
    and the connection closed; a body cut off (the client reset or closed the connection) is
    logged as one INFO line and answered with a 400 that nobody reads. Handlers then read the
    body aiohttp keeps (``request.read()``, :func:`~server.transport.http_api.forms.json_body`)."""
    if request.can_read_body:
        limit = request.app[CONTEXT].settings.body_timeout_s
        try:
            async with asyncio.timeout(limit):
                await request.read()  # bounded by the application's client_max_size (413)
        except TimeoutError:
            logger.info(
                "HTTP API: %s %s from %s: body not received within %g s (answered 408)",
                request.method,
                request.path,
                client_address(request.transport) if request.transport else "?",
                limit,
            )
            answer = _refusal(408, f"The request body did not arrive within {limit:g} s.")
            answer.force_close()
            return answer
        except (ConnectionError, PayloadEncodingError) as error:
            logger.info(
                "HTTP API: %s %s: the client went away during its body (%s)",
                request.method,
                request.path,
                type(error).__name__,
            )
            answer = _refusal(400, "The request body was cut off.")
            answer.force_close()
            return answer
    return await handler(request)


def _refusal(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    body: ErrorAnswer = {"error": message}
    return web.json_response(body, status=status, headers=headers)


def _allow(error: web.HTTPException) -> dict[str, str]:
    allow = error.headers.get("Allow")
    return {"Allow": allow} if allow else {}


async def _secured(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer (streams included) names the server without versions and carries the
    security headers (:mod:`server.transport.headers`) it does not set itself."""
    response.headers["Server"] = SERVER_NAME
    for name, value in SECURITY_HEADERS:
        response.headers.setdefault(name, value)


def build_application(context: ApiContext) -> web.Application:
    """The application: the route modules' routes; what none answers, the plain pages (or
    404 / 405: :mod:`~server.transport.http_api.pages`)."""
    app = web.Application(
        middlewares=[lichess_errors, whole_bodies, pages.pages_fallback],
        client_max_size=MAX_BODY_BYTES,
    )
    app.on_response_prepare.append(_secured)
    app[CONTEXT] = context
    for module in ROUTE_MODULES:
        app.add_routes(module.routes)
    return app

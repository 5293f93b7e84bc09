"""What no route of the API answers: the plain pages, 404 or 405.

A request whose path is not the API's, on a connection this application holds (a browser that
asked for ``/api/account`` and then ``/static/app.js`` on the same connection, or any method but
GET, which the public listener always hands here: websockets' server reads only GETs), is
answered as the websocket server answers it (:class:`~server.transport.http.HttpRoutes`): a GET
or HEAD gets the page (the websocket path itself needs a connection of its own: 426); another
method gets 405 with ``Allow: GET, HEAD`` where that GET finds a page, else 404. On the API's
paths the router's own answers stand: 404, or 405 with the methods the path is served by.

This is a middleware, not a catch-all route, so that a catch-all's GET never counts among the
methods a 405 offers for an API path (aiohttp gathers ``Allow`` from every matching route).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.web_urldispatcher import MatchInfoError

from server.transport.http_api.context import CONTEXT, api_error, request_address
from server.transport.http_api.paths import is_api_path
from server.transport.review_reads import address_key

__all__ = ["PAGE_METHODS", "pages_fallback"]

PAGE_METHODS = ("GET", "HEAD")
"""The methods the plain pages answer."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def pages_fallback(request: web.Request, handler: Handler) -> web.StreamResponse:
    """No route of the API has the request's path: the page, 405 or 404 (module docstring)."""
    match = request.match_info
    if not isinstance(match, MatchInfoError):
        return await handler(request)
    if is_api_path(request.path):
        if match.http_exception.status == 404:
            api_error(404, "Not found.")
        return await handler(request)  # the router's 405, with the path's methods
    pages = request.app[CONTEXT].pages
    answer = await pages.answer(request.path_qs, address_key(request_address(request)))
    if request.method not in PAGE_METHODS:
        if answer is not None and answer[0] == 404:
            api_error(404, "Not found.")
        raise web.HTTPMethodNotAllowed(request.method, PAGE_METHODS)
    if answer is None:
        refused = web.Response(
            status=426,
            text="Open the websocket on a connection of its own.\n",
            headers={"Upgrade": "websocket"},
        )
        refused.force_close()
        return refused
    status, body, content_type = answer
    headers = {"Content-Type": content_type, "Cache-Control": "no-cache"}
    retry_after = pages.retry_after(status)
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return web.Response(status=status, body=body, headers=headers)

"""The fallback: a request that is not for the API, on a connection this application kept alive
(a browser that asked for ``/api/account`` and then ``/static/app.js`` on the same connection),
gets the websocket server's plain pages (:class:`~server.transport.http.HttpRoutes`); the
websocket path itself needs a connection of its own (426)."""

from __future__ import annotations

from aiohttp import web

from server.transport.http_api.context import CONTEXT, api_error, request_address
from server.transport.http_api.paths import is_api_path
from server.transport.review_reads import address_key

routes = web.RouteTableDef()


@routes.get("/{tail:.*}")
async def page(request: web.Request) -> web.Response:
    if is_api_path(request.path):
        api_error(404, "Not found.")
    pages = request.app[CONTEXT].pages
    answer = await pages.answer(request.path_qs, address_key(request_address(request)))
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

"""``GET /game/export/{id}``: a stored game as PGN (default), or ``?format=kif`` / ``usi`` —
the review API's exporters (:mod:`server.transport.review`)."""

from __future__ import annotations

import json

from aiohttp import web

from server.transport.http_api.context import CONTEXT, api_error, request_address
from server.transport.review import review_http
from server.transport.review_reads import address_key

routes = web.RouteTableDef()


@routes.get("/game/export/{id}")
async def export(request: web.Request) -> web.Response:
    game_id = request.match_info["id"]
    fmt = request.query.get("format", "pgn")
    if fmt not in ("pgn", "kif", "usi") or not 0 < len(game_id) <= 32 or "/" in game_id:
        api_error(400 if fmt not in ("pgn", "kif", "usi") else 404, "No such game or format")
    context = request.app[CONTEXT]
    status, content_type, body = await review_http(
        context.store,
        f"/api/games/{game_id}.{fmt}",
        {},
        context.pages.reads,
        address_key(request_address(request)),
    )
    if status != 200:
        try:
            message = str(json.loads(body)["error"]["message"])
        except (ValueError, KeyError, TypeError):
            message = "No such game"
        retry_after = context.pages.retry_after(status)
        api_error(
            status, message, None if retry_after is None else {"Retry-After": str(retry_after)}
        )
    return web.Response(status=200, body=body, headers={"Content-Type": content_type})

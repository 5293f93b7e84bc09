"""``GET /game/export/{id}``: a stored game as PGN (default), or ``?format=kif`` / ``usi`` —
the review API's exporters (:mod:`server.transport.review`)."""

from __future__ import annotations

import json

from aiohttp import web

from server.transport.http_api.context import CONTEXT, api_error
from server.transport.review import review_http

routes = web.RouteTableDef()


@routes.get("/game/export/{id}")
async def export(request: web.Request) -> web.Response:
    game_id = request.match_info["id"]
    fmt = request.query.get("format", "pgn")
    if fmt not in ("pgn", "kif", "usi") or not 0 < len(game_id) <= 32 or "/" in game_id:
        api_error(400 if fmt not in ("pgn", "kif", "usi") else 404, "No such game or format")
    status, content_type, body = await review_http(
        request.app[CONTEXT].store, f"/api/games/{game_id}.{fmt}", {}
    )
    if status != 200:
        try:
            message = str(json.loads(body)["error"]["message"])
        except (ValueError, KeyError, TypeError):
            message = "No such game"
        api_error(status, message)
    return web.Response(status=200, body=body, headers={"Content-Type": content_type})

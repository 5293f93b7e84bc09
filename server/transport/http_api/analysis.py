"""``/api/game/{id}/analysis`` on the HTTP API: request a computer analysis of a finished game
(``POST``) and read its progress and results (``GET``).

``POST`` takes its limits per analysed position as a JSON object, a form or the query string:
``movetime_ms`` (50–10000) and/or ``depth`` (1–30); without them the variant's default move
time (Dai Shogi: 1 s a position — slow, the answer carries an estimate). It answers ``202``
with the analysis (state ``queued``). ``Authorization: Bearer <session token>`` (the web
client's login) names the requester, who must be a registered player. Refusals, lichess's way
``{"error": "…"}``, change nothing: 400 bad field or too long, 401 no or bad session, 403 a
guest, 404 unknown game, 409 game not finished or already analysed (a failed analysis may be
requested again), 429 the player's previous analysis unfinished, daily quota used or requests too fast, 503
storage unavailable (:func:`server.transport.analysis_api.request_analysis`). ``GET``
answers the view (:func:`server.transport.analysis_api.view_of`) or 404.

The checks and the view are :mod:`server.transport.analysis_api`'s, shared with the websocket.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from server.hub.game_ids import GAME_ID_PATTERN
from server.transport.accounts import AuthError
from server.transport.analysis_api import (
    AnalysisRequestError,
    Requester,
    analysis_view,
    request_analysis,
)
from server.transport.http_api.context import CONTEXT, api_error
from server.transport.http_api.forms import json_body

__all__ = ["routes"]

routes = web.RouteTableDef()

_PATH = f"/api/game/{{id:{GAME_ID_PATTERN.pattern}}}/analysis"


def _desk(request: web.Request) -> Any:
    desk = request.app[CONTEXT].analysis
    if desk is None:
        api_error(503, "Computer analysis is not available on this server.")
    return desk


async def _fields(request: web.Request) -> dict[str, object]:
    fields: dict[str, object] = dict(request.query)
    if not request.body_exists:
        return fields
    if request.content_type == "application/json":
        fields.update(await json_body(request))
    else:
        fields.update(await request.post())
    return fields


async def _requester(request: web.Request) -> Requester | None:
    """The session's player (None: no ``Authorization``; the shared checks refuse that)."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        api_error(401, "Authorization must be 'Bearer <session token>'.")
    try:
        identity = await request.app[CONTEXT].accounts.resume(token.strip())
    except AuthError as exc:
        api_error(401, exc.message)
    info = identity.info
    return Requester(str(info.id), str(info.name), info.guest)


@routes.post(_PATH)
async def request(request: web.Request) -> web.Response:
    desk = _desk(request)
    fields = await _fields(request)
    player = await _requester(request)
    try:
        view = await request_analysis(desk, request.match_info["id"], fields, player)
    except AnalysisRequestError as exc:
        api_error(exc.status, exc.message)
    return web.json_response(view, status=202)


@routes.get(_PATH)
async def show(request: web.Request) -> web.Response:
    desk = _desk(request)
    if request.query:
        api_error(400, "This resource takes no query fields.")
    try:
        view = await analysis_view(desk, request.match_info["id"])
    except AnalysisRequestError as exc:
        api_error(exc.status, exc.message)
    return web.json_response(view)

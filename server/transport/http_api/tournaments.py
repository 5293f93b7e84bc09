"""Arena tournaments, lichess's API (docs/tournaments-api.md): ``GET /api/tournament`` (the
arenas created, started and finished), ``POST /api/tournament`` (create one), ``GET
/api/tournament/{id}``, ``POST /api/tournament/{id}/join`` and ``/withdraw``, ``GET
/api/tournament/{id}/results`` (NDJSON) and ``/games`` (PGN).

Reads need no token; creating, joining and withdrawing need one (a bot's or a player's
``Authorization: Bearer``). The shapes are :mod:`.lichess_tournaments`'s; the form is
:mod:`.tournament_forms`'s; limits and shared answers :mod:`.tournament_calls`'s.
"""

from __future__ import annotations

import time
import typing

from aiohttp import web

from server.hub.tournament_payloads import TournamentStatusName
from server.jsontypes import JsonObject
from server.transport.http_api import lichess_tournaments as shapes
from server.transport.http_api.context import api_error
from server.transport.http_api.forms import read_form, whole_number
from server.transport.http_api.tournament_calls import (
    ID,
    admit_read,
    call,
    games_pgn,
    join,
    results,
    service,
    tournament_of,
    withdraw,
    writer,
)
from server.transport.http_api.tournament_forms import arena_form

__all__ = ["routes"]

routes = web.RouteTableDef()

ARENA = ("arena",)
WHAT = "arena tournament"
LISTED = 50
"""Arenas listed per status (the newest first)."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@routes.get("/api/tournament")
async def current(request: web.Request) -> web.Response:
    """``{"created": […], "started": […], "finished": […]}``: the newest arenas of each."""
    admit_read(request)
    desk = service(request)
    now = _now_ms()
    answer: dict[str, list[JsonObject]] = {}
    for status in typing.get_args(TournamentStatusName):
        found = await call(desk.list(status, limit=LISTED * 2))
        answer[status] = [
            shapes.arena_summary(summary, now)
            for summary in found
            if summary["settings"]["format"] == "arena"
        ][:LISTED]
    return web.json_response(answer)


@routes.post("/api/tournament")
async def create(request: web.Request) -> web.Response:
    player = await writer(request)
    desk = service(request)
    settings, password = arena_form(await read_form(request), desk.max_players)
    tournament_id = await call(desk.create(player, settings, password=password))
    view = await call(desk.view(tournament_id))
    return web.json_response(shapes.arena_view(view, _now_ms(), 1))


@routes.get(f"/api/tournament/{ID}")
async def show(request: web.Request) -> web.Response:
    admit_read(request)
    raw = request.query.get("page", "1")
    page = whole_number(raw, 4)
    if page is None or page < 1:
        api_error(400, "page: must be a whole number from 1")
    tournament_id, _ = await tournament_of(request, ARENA, WHAT)
    view = await call(service(request).view(tournament_id))
    return web.json_response(shapes.arena_view(view, _now_ms(), page))


@routes.post(f"/api/tournament/{ID}/join")
async def join_arena(request: web.Request) -> web.Response:
    return await join(request, ARENA, WHAT)


@routes.post(f"/api/tournament/{ID}/withdraw")
async def withdraw_arena(request: web.Request) -> web.Response:
    return await withdraw(request, ARENA, WHAT)


@routes.get(f"/api/tournament/{ID}/results")
async def arena_results(request: web.Request) -> web.Response:
    return await results(request, ARENA, WHAT)


@routes.get(f"/api/tournament/{ID}/games")
async def arena_games(request: web.Request) -> web.StreamResponse:
    return await games_pgn(request, ARENA, WHAT)

"""Swiss tournaments on lichess's paths, and round robins on the same pattern
(docs/tournaments-api.md).

Swiss: ``POST /api/swiss/new/{teamId}`` (we have no teams: ``teamId`` is a free label kept
with the tournament and shown back as ``teamId``), ``GET /api/swiss/{id}``, ``POST
/api/swiss/{id}/join`` and ``/withdraw``, ``GET /api/swiss/{id}/results`` (NDJSON) and
``/games`` (PGN), ``GET /swiss/{id}.trf``.

Round robin (ours; lichess has none): ``POST /api/roundrobin`` (the Swiss form without
``nbRounds``; ``double=true`` for a double round robin), ``GET /api/roundrobin/{id}``, ``POST
/api/roundrobin/{id}/join`` and ``/withdraw``, ``GET /api/roundrobin/{id}/results`` and
``/games``, ``GET /roundrobin/{id}.trf``.
"""

from __future__ import annotations

from aiohttp import web

from server.transport.http_api import lichess_tournaments as shapes
from server.transport.http_api.forms import read_form
from server.transport.http_api.tournament_calls import (
    ID,
    admit_read,
    call,
    games_pgn,
    join,
    results,
    service,
    tournament_of,
    trf_text,
    withdraw,
    writer,
)
from server.transport.http_api.tournament_forms import swiss_form, team_label

__all__ = ["routes"]

routes = web.RouteTableDef()

SWISS = ("swiss",)
ROUND_ROBIN = ("round_robin", "double_round_robin")
SWISS_WHAT = "Swiss tournament"
ROUND_ROBIN_WHAT = "round robin"


async def _created(request: web.Request, tournament_id: str, team: str | None) -> web.Response:
    view = await call(service(request).view(tournament_id))
    return web.json_response(shapes.swiss_view(view, team))


@routes.post("/api/swiss/new/{team}")
async def create_swiss(request: web.Request) -> web.Response:
    team = team_label(request.match_info["team"])
    player = await writer(request)
    desk = service(request)
    settings, password = swiss_form(await read_form(request), desk.max_players, "swiss", team)
    tournament_id = await call(desk.create(player, settings, password=password))
    return await _created(request, tournament_id, team)


@routes.post("/api/roundrobin")
async def create_round_robin(request: web.Request) -> web.Response:
    player = await writer(request)
    desk = service(request)
    settings, password = swiss_form(await read_form(request), desk.max_players, "round_robin")
    tournament_id = await call(desk.create(player, settings, password=password))
    return await _created(request, tournament_id, None)


async def _show(request: web.Request, formats: tuple[str, ...], what: str) -> web.Response:
    admit_read(request)
    tournament_id, settings = await tournament_of(request, formats, what)
    view = await call(service(request).view(tournament_id))
    return web.json_response(shapes.swiss_view(view, settings.team))


@routes.get(f"/api/swiss/{ID}")
async def show_swiss(request: web.Request) -> web.Response:
    return await _show(request, SWISS, SWISS_WHAT)


@routes.get(f"/api/roundrobin/{ID}")
async def show_round_robin(request: web.Request) -> web.Response:
    return await _show(request, ROUND_ROBIN, ROUND_ROBIN_WHAT)


@routes.post(f"/api/swiss/{ID}/join")
async def join_swiss(request: web.Request) -> web.Response:
    return await join(request, SWISS, SWISS_WHAT)


@routes.post(f"/api/roundrobin/{ID}/join")
async def join_round_robin(request: web.Request) -> web.Response:
    return await join(request, ROUND_ROBIN, ROUND_ROBIN_WHAT)


@routes.post(f"/api/swiss/{ID}/withdraw")
async def withdraw_swiss(request: web.Request) -> web.Response:
    return await withdraw(request, SWISS, SWISS_WHAT)


@routes.post(f"/api/roundrobin/{ID}/withdraw")
async def withdraw_round_robin(request: web.Request) -> web.Response:
    return await withdraw(request, ROUND_ROBIN, ROUND_ROBIN_WHAT)


@routes.get(f"/api/swiss/{ID}/results")
async def swiss_results(request: web.Request) -> web.Response:
    return await results(request, SWISS, SWISS_WHAT)


@routes.get(f"/api/roundrobin/{ID}/results")
async def round_robin_results(request: web.Request) -> web.Response:
    return await results(request, ROUND_ROBIN, ROUND_ROBIN_WHAT)


@routes.get(f"/api/swiss/{ID}/games")
async def swiss_games(request: web.Request) -> web.StreamResponse:
    return await games_pgn(request, SWISS, SWISS_WHAT)


@routes.get(f"/api/roundrobin/{ID}/games")
async def round_robin_games(request: web.Request) -> web.StreamResponse:
    return await games_pgn(request, ROUND_ROBIN, ROUND_ROBIN_WHAT)


@routes.get(f"/swiss/{ID}.trf")
async def swiss_trf(request: web.Request) -> web.Response:
    return await trf_text(request, SWISS, SWISS_WHAT)


@routes.get(f"/roundrobin/{ID}.trf")
async def round_robin_trf(request: web.Request) -> web.Response:
    return await trf_text(request, ROUND_ROBIN, ROUND_ROBIN_WHAT)

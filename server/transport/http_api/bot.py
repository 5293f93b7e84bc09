"""A bot's game actions: ``POST /api/bot/game/{id}/move/{move}`` (``?offeringDraw=true``),
``/chat`` (form ``room``, ``text``), ``/abort``, ``/resign``, ``/draw/{yes|no}``,
``/takeback/{yes|no}``; ``GET /api/account/playing``; ``GET /api/bot/online``.

Each action is one hub command, answered ``{"ok": true}`` once the hub acknowledged it (a move:
once stored), or with the hub's refusal as ``{"error": "…"}`` (400; 404 for an unknown game;
429 over the rate limit; 503 when it could not be stored).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable

from aiohttp import web

from server.hub.errors import ErrorCode
from server.hub.payloads import AckPayload
from server.jsontypes import JsonObject
from server.transport.http_api.account import account_view
from server.transport.http_api.auth import Caller, caller
from server.transport.http_api.context import CONTEXT, api_error, held_link
from server.transport.http_api.forms import flag, read_form, whole_number
from server.transport.http_api.lichess import OK, GameEventInfo, NowPlayingAnswer
from server.transport.http_api.link import CommandFailed

routes = web.RouteTableDef()


async def _bot(request: web.Request) -> Caller:
    who = await caller(request)
    if not who.account.bot:
        api_error(400, "This endpoint can only be used with a Bot account.")
    return who


async def _act(request: web.Request, kind: str, payload: JsonObject) -> AckPayload:
    """Run one hub command for the caller's link; its ack's payload."""
    who = await _bot(request)
    async with held_link(request, who.info) as link:
        return await link.command(kind, payload)


async def _game_command(
    request: web.Request, kind: str, extra: JsonObject | None = None
) -> AckPayload:
    game_id = request.match_info["id"]
    return await _act(request, kind, {"game": game_id, **(extra or {})})


@routes.post("/api/bot/game/{id}/move/{move}")
async def move(request: web.Request) -> web.Response:
    who = await _bot(request)
    game_id, uci = request.match_info["id"], request.match_info["move"]
    offering_draw = flag(dict(request.query), "offeringDraw")
    async with held_link(request, who.info) as link:
        game = await link.follow(game_id)
        ply = len(game.get("moves", [])) + 1
        try:
            await link.command("move", {"game": game_id, "ply": ply, "move": uci})
        except CommandFailed as error:
            state = error.data.get("state") or {}
            if error.code != ErrorCode.STALE_MOVE or not isinstance(state.get("ply"), int):
                raise
            # This connection had not seen the latest move yet: the state says where it is.
            await link.command("move", {"game": game_id, "ply": state["ply"] + 1, "move": uci})
        if offering_draw:
            with contextlib.suppress(CommandFailed):
                await link.command("draw_offer", {"game": game_id})
    return web.json_response(OK)


@routes.post("/api/bot/game/{id}/chat")
async def chat(request: web.Request) -> web.Response:
    form = await read_form(request)
    room = form.get("room", "player")
    if room not in ("player", "spectator"):
        api_error(400, "room: must be player or spectator")
    text = form.get("text", "")
    who = await _bot(request)
    game_id = request.match_info["id"]
    async with held_link(request, who.info) as link:
        await link.follow(game_id)
        await link.command("chat", {"game": game_id, "text": text})
    return web.json_response(OK)


@routes.post("/api/bot/game/{id}/abort")
async def abort(request: web.Request) -> web.Response:
    await _game_command(request, "abort")
    return web.json_response(OK)


@routes.post("/api/bot/game/{id}/resign")
async def resign(request: web.Request) -> web.Response:
    await _game_command(request, "resign")
    return web.json_response(OK)


def _answer(kind: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def answer(request: web.Request) -> web.Response:
        choice = request.match_info["accept"]
        if choice not in ("yes", "no"):
            api_error(404, "Not found.")
        # Offering what the opponent offers accepts it (the hub's rule), so "yes" both offers
        # and accepts, as lichess's does.
        action = "offer" if choice == "yes" else "decline"
        await _game_command(request, f"{kind}_{action}")
        return web.json_response(OK)

    return answer


routes.post("/api/bot/game/{id}/draw/{accept}")(_answer("draw"))
routes.post("/api/bot/game/{id}/takeback/{accept}")(_answer("takeback"))


NOW_PLAYING_DEFAULT = 9
NOW_PLAYING_MAX = 50
"""``GET /api/account/playing?nb=``: lichess's default and largest count of games listed."""


@routes.get("/api/account/playing")
async def playing(request: web.Request) -> web.Response:
    who = await caller(request)
    raw = request.query.get("nb", "")
    count = NOW_PLAYING_DEFAULT if not raw else whole_number(raw, 3)
    if count is None or not 1 <= count <= NOW_PLAYING_MAX:
        api_error(400, f"nb: must be 1 to {NOW_PLAYING_MAX}")
    async with held_link(request, who.info) as link:
        starts = await link.running_starts(count)
        now: list[GameEventInfo] = [start["game"] for start in starts]
    answer: NowPlayingAnswer = {"nowPlaying": now}
    return web.json_response(answer)


@routes.get("/api/bot/online")
async def online(request: web.Request) -> web.StreamResponse:
    """The bots holding an event stream on this server process, as NDJSON (lichess's form)."""
    context = request.app[CONTEXT]
    lines = []
    for link in context.links.online():
        found = await context.store.player_by_name(link.name)
        if found is not None and found.bot:
            lines.append(json.dumps(account_view(found)) + "\n")
    return web.Response(text="".join(lines), content_type="application/x-ndjson")

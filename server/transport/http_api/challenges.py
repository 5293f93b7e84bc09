"""Challenges: ``POST /api/challenge/ai`` (play the computer at once), ``POST /api/challenge/{user}``, ``/api/challenge/{id}/accept``, ``/decline``
(form ``reason``), ``/cancel``.

Creating one takes lichess's form fields ``rated``, ``clock.limit`` and ``clock.increment``
(seconds), ``color`` (``white`` = the first player, ``black``, ``random``) and ``variant``
(our variant keys); a byoyomi clock (shogi variants) is ``clock.limit``, ``clock.byoyomi``
and ``clock.periods``. A challenge to a player (not the computer) without ``clock.limit`` is a
correspondence game, as lichess's: ``days`` (1, 2, 3, 5, 7, 10 or 14) per move, or without
``days`` no clock at all (``unlimited``). The target must be online (the hub's ``match``): a bot is online while
it holds its event stream. Unknown fields are ignored.
"""

from __future__ import annotations

from aiohttp import web

from server.hub.fields import MAX_ID, MAX_LEVEL, MIN_LEVEL
from server.hub.payloads import AckPayload, TimeControlView
from server.jsontypes import JsonObject
from server.rules.time_control import CORRESPONDENCE_DAYS
from server.transport.http_api import lichess
from server.transport.http_api.auth import caller
from server.transport.http_api.context import api_error, held_link
from server.transport.http_api.forms import flag, read_form, whole_number

routes = web.RouteTableDef()


def _integer(form: dict[str, str], name: str, default: int | None = None) -> int:
    raw = form.get(name)
    if raw is None or raw == "":
        if default is None:
            api_error(400, f"{name}: required")
        return default
    value = whole_number(raw, 9)
    if value is None:
        api_error(400, f"{name}: must be a whole number of seconds")
    return value


def _time_control(form: dict[str, str]) -> TimeControlView:
    limit = _integer(form, "clock.limit", 300)
    if "clock.byoyomi" in form or "clock.periods" in form:
        return {
            "kind": "byoyomi",
            "main_s": limit,
            "period_s": _integer(form, "clock.byoyomi", 10),
            "periods": _integer(form, "clock.periods", 1),
        }
    return {"kind": "fischer", "base_s": limit, "inc_s": _integer(form, "clock.increment", 0)}


def _player_time_control(form: dict[str, str]) -> TimeControlView:
    """A challenge to a player: a clock (``clock.limit``), else ``days`` per move, else none."""
    if form.get("clock.limit"):
        if form.get("days"):
            api_error(400, "days: give either clock.limit or days, not both")
        return _time_control(form)
    raw = form.get("days")
    if not raw:
        return {"kind": "unlimited"}
    days = whole_number(raw, 3)
    if days not in CORRESPONDENCE_DAYS:
        choices = ", ".join(map(str, CORRESPONDENCE_DAYS))
        api_error(400, f"days: must be one of {choices}")
    return {"kind": "correspondence", "days": days}


async def _command(request: web.Request, kind: str, payload: JsonObject) -> AckPayload:
    """Answer (or withdraw) a challenge; the link forgets it once the hub took the answer (the
    hub tells the other party, not the one who answered)."""
    who = await caller(request)
    async with held_link(request, who.info) as link:
        answer = await link.command(kind, payload)
        link.challenges.pop(payload["id"], None)
        return answer


def _challenge_id(request: web.Request) -> int:
    found = whole_number(request.match_info["id"], len(str(MAX_ID)))
    if found is None or not 1 <= found <= MAX_ID:  # the hub's range of ids
        api_error(404, "No such challenge")
    return found


# Registered before ``/api/challenge/{user}``: aiohttp tries routes in order, and "ai" would
# otherwise be read as a user name.
@routes.post("/api/challenge/ai")
async def create_ai(request: web.Request) -> web.Response:
    """lichess's "challenge the AI": form ``level`` (1-8), ``clock.limit``, ``clock.increment``
    (or the byoyomi fields), ``color``, ``variant``. The game starts at once (unrated, the
    hub's ``challenge_ai``); its id is answered, and ``gameStart`` follows on the event stream
    once the game is stored."""
    form = await read_form(request)
    color = form.get("color", "random")
    if color not in lichess.SIDE:
        api_error(400, "color: must be white, black or random")
    level = _integer(form, "level", 1)
    if not MIN_LEVEL <= level <= MAX_LEVEL:
        api_error(400, f"level: must be {MIN_LEVEL} to {MAX_LEVEL}")
    if form.get("days"):
        api_error(400, "days: correspondence games are not offered here; give clock.limit")
    if form.get("fen"):
        api_error(400, "fen: games against the computer start from the variant's position")
    tc = _time_control(form)
    variant = form.get("variant", "")
    payload = {"variant": variant, "tc": tc, "colour": lichess.SIDE[color], "level": level}
    who = await caller(request)
    async with held_link(request, who.info) as link:
        answer = await link.command("challenge_ai", payload)
    started: lichess.AiChallengeAnswer = {
        "id": str(answer.get("game")),
        "rated": False,
        "source": "ai",
        "level": level,
        "variant": lichess.variant_view(variant),
        "clock": lichess.clock_view(tc),
        "status": {"id": 20, "name": "started"},
    }
    return web.json_response(started)


@routes.post("/api/challenge/{user}")
async def create(request: web.Request) -> web.Response:
    form = await read_form(request)
    color = form.get("color", "random")
    if color not in lichess.SIDE:
        api_error(400, "color: must be white, black or random")
    payload = {
        "to": request.match_info["user"],
        "variant": form.get("variant", ""),
        "tc": _player_time_control(form),
        "rated": flag(form, "rated"),
        "colour": lichess.SIDE[color],
    }
    who = await caller(request)
    async with held_link(request, who.info) as link:
        answer = await link.command("match", payload)
        challenge = link.challenges.get(answer.get("challenge", -1))
    if challenge is None:  # pragma: no cover - the hub tells both parties before the ack
        pending: lichess.PendingChallengeAnswer = {
            "id": str(answer.get("challenge")),
            "status": "created",
        }
        return web.json_response(pending)
    return web.json_response(lichess.challenge_view(challenge))


@routes.post("/api/challenge/{id}/accept")
async def accept(request: web.Request) -> web.Response:
    await _command(request, "accept", {"id": _challenge_id(request)})
    return web.json_response(lichess.OK)


@routes.post("/api/challenge/{id}/decline")
async def decline(request: web.Request) -> web.Response:
    form = await read_form(request)
    payload: JsonObject = {"id": _challenge_id(request)}
    if form.get("reason"):
        payload["reason"] = form["reason"][:140]
    await _command(request, "decline", payload)
    return web.json_response(lichess.OK)


@routes.post("/api/challenge/{id}/cancel")
async def cancel(request: web.Request) -> web.Response:
    await _command(request, "withdraw", {"id": _challenge_id(request)})
    return web.json_response(lichess.OK)

"""The NDJSON streams: ``GET /api/stream/event`` and ``GET /api/bot/game/stream/{id}``.

One JSON object per line, a blank line at least every 7 s (:data:`~.link.KEEPALIVE_S`).
The event stream starts with the running game (``gameStart``) and the open challenges addressed
to the bot (``challenge``), then follows the hub. A game stream starts with ``gameFull`` and
ends after the game's end (its last line is the final ``gameState``). A reader that falls
behind by :data:`~.link.MAX_QUEUED` lines is cut off.
"""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web

from server.transport.http_api import lichess
from server.transport.http_api.auth import caller
from server.transport.http_api.context import CONTEXT, api_error
from server.transport.http_api.link import BotLink, CommandFailed, NdjsonStream

routes = web.RouteTableDef()

HEADERS = {"Content-Type": "application/x-ndjson", "Cache-Control": "no-cache"}


async def _pump(request: web.Request, stream: NdjsonStream) -> web.StreamResponse:
    """Write the stream's lines until it ends, the reader goes or falls behind."""
    response = web.StreamResponse(headers=HEADERS)
    response.enable_chunked_encoding()
    await response.prepare(request)
    transport = request.transport
    if transport is not None:
        # Too slow: cut off at once, even while the writer waits for the socket to drain (a
        # reader that stopped reading never lets it); nothing more is kept for it.
        stream.on_drop = transport.abort
        if stream.dropped:
            transport.abort()
    try:
        while True:
            line = await stream.next_line()
            if line is None:
                break
            await response.write(line)
        if stream.dropped:
            return response  # cut off (on_drop): no end of the chunked body
        await response.write_eof()
    except (ConnectionResetError, ConnectionError):
        pass
    return response


@routes.get("/api/stream/event")
async def event_stream(request: web.Request) -> web.StreamResponse:
    who = await caller(request)
    link: BotLink = await _link(request, who.info)
    stream = NdjsonStream()
    link.events.add(stream)
    try:
        for start in await link.running_starts():
            stream.send(start)
        for challenge in list(link.challenges.values()):
            if challenge.get("to", {}).get("id") == who.info.id:
                stream.send({"type": "challenge", "challenge": lichess.challenge_view(challenge)})
        return await _pump(request, stream)
    finally:
        link.events.discard(stream)
        link.release()


@routes.get("/api/bot/game/stream/{id}")
async def game_stream(request: web.Request) -> web.StreamResponse:
    who = await caller(request)
    game_id = request.match_info["id"]
    link = await _link(request, who.info)
    stream = NdjsonStream(game_id)
    try:
        try:
            # A fresh snapshot for this stream: join again (the hub sends the room's state).
            link.games.pop(game_id, None)
            game = await link.follow(game_id)
        except CommandFailed as error:
            api_error(error.status, "No such game" if error.status == 404 else error.message)
        if game.get("role") not in ("first", "second"):
            with contextlib.suppress(CommandFailed):
                await link.command("leave", {"game": game_id})
            link.games.pop(game_id, None)
            api_error(404, "No such game (not one of yours)")
        link.game_streams.add(stream)
        stream.send(lichess.game_full(game, await _created_at_ms(request, game_id)))
        if game.get("status") == "finished":
            stream.end()
        return await _pump(request, stream)
    finally:
        link.game_streams.discard(stream)
        link.release()


CREATED_AT_WAIT_S = 2.0
"""How long a game stream's start waits for the store's creation time before it leaves it out."""


async def _created_at_ms(request: web.Request, game_id: str) -> int | None:
    """The game's creation time as stored (``gameFull``'s ``createdAt``), or None when the
    database cannot say it now: the stream does not wait for a detail."""
    try:
        record = await asyncio.wait_for(
            request.app[CONTEXT].store.get_game(game_id), CREATED_AT_WAIT_S
        )
    except TimeoutError:
        return None
    except Exception as error:
        if type(error).__name__ == "StoreUnavailableError":
            return None
        raise
    return None if record is None else int(record.created_at.timestamp() * 1000)


async def _link(request: web.Request, info: object) -> BotLink:
    from server.hub.identity import PlayerInfo

    assert isinstance(info, PlayerInfo)
    try:
        return await request.app[CONTEXT].links.link(info)
    except TimeoutError:
        api_error(503, "The hub did not answer in time.")

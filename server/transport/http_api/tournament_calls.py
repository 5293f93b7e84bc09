"""What the tournament routes (:mod:`.tournaments`, :mod:`.swiss`) share: the director, its
refusals as lichess's errors, the limits, and the answers every format gives alike (join,
withdraw, results as NDJSON, games as PGN, the TRF).

Limits (docs/architecture.md, "Abuse and limits"): a request that changes something (create,
join, withdraw) takes a token from its account's bucket (``rate_limit_per_s`` /
``rate_limit_burst``, as a bot's commands): over it, 429; the director's own limits follow
(``tournaments_per_day`` per account …). A read takes a token from the stored-game reads'
bucket of its address (``review_reads_per_s`` / ``review_reads_burst``, as ``/game/export``):
over it, 429 with ``Retry-After``. A games export paces itself: each game not in the cache is
a replay counted against the address's replay bucket; when it is empty the export waits for
the next token rather than failing half-way.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Collection
from typing import TypeVar

from aiohttp import web

from server.hub.errors import CommandError, ErrorCode
from server.hub.game_ids import GAME_ID_PATTERN
from server.hub.identity import PlayerInfo
from server.hub.tournament.values import TournamentSettings
from server.hub.tournament.views import standing_view
from server.rules.record import GameRecord
from server.transport.http_api import lichess_tournaments as shapes
from server.transport.http_api.auth import Caller, caller, store_call
from server.transport.http_api.context import CONTEXT, api_error, request_address
from server.transport.http_api.forms import flag, read_form, whole_number
from server.transport.http_api.link import status_of_code
from server.transport.ratelimit import Verdict
from server.transport.review import ReviewStore, export_game
from server.transport.review_reads import ReviewReads, address_key
from server.transport.review_views import ReviewError
from server.transport.tournament_service import TournamentService, entry_status

__all__ = [
    "ID",
    "admit_read",
    "call",
    "games_pgn",
    "join",
    "results",
    "service",
    "tournament_of",
    "trf_text",
    "withdraw",
    "writer",
]

T = TypeVar("T")

ID = f"{{id:{GAME_ID_PATTERN.pattern}}}"
"""A tournament id in a route (a game id's form)."""
NDJSON = "application/x-ndjson"
PGN = "application/x-chess-pgn; charset=utf-8"
MAX_RESULTS = 10_000


def service(request: web.Request) -> TournamentService:
    found: TournamentService | None = request.app[CONTEXT].tournaments
    if found is None:
        api_error(503, "Tournaments are not served here.")
    return found


async def call(awaitable: Awaitable[T]) -> T:
    """Await a director call; its refusal is lichess's error (404 no such tournament, 429
    the daily quota, 400 the others), nothing changed; the database unreachable, 503."""
    try:
        return await store_call(awaitable)
    except CommandError as error:
        api_error(status_of_code(error.code), error.message)


def admit_read(request: web.Request) -> None:
    """Count one read against the address's stored-game reads (429 over it)."""
    context = request.app[CONTEXT]
    reads = context.pages.reads
    if reads is None:
        return
    wait = reads.admit(address_key(request_address(request)), time.monotonic())
    if wait is not None:
        api_error(429, "Too many requests; slow down.", {"Retry-After": str(wait)})


async def writer(request: web.Request) -> PlayerInfo:
    """The caller of a request that changes something, counted against its account's bucket;
    their hub copy when online here (its ratings follow the games played since the login)."""
    who: Caller = await caller(request)
    context = request.app[CONTEXT]
    verdict = context.tournament_writes.take(who.info.id, asyncio.get_running_loop().time())
    if verdict is not Verdict.ACCEPT:
        api_error(429, "Too many requests; slow down.")
    online = context.driver.hub.state.players.get(who.info.id)
    return who.info if online is None else online.info


async def tournament_of(
    request: web.Request, formats: Collection[str], what: str
) -> tuple[str, TournamentSettings]:
    """The path's tournament and its settings; 404 ``No such {what}`` when there is none of
    these ``formats`` (an arena's id on a Swiss path, say: the paths keep lichess's split)."""
    tournament_id = request.match_info["id"]
    try:
        settings = await store_call(service(request).settings(tournament_id))
    except CommandError as error:
        if error.code != ErrorCode.NO_SUCH_TOURNAMENT:
            api_error(status_of_code(error.code), error.message)
        api_error(404, f"No such {what}")
    if settings.format not in formats:
        api_error(404, f"No such {what}")
    return tournament_id, settings


async def _fields(request: web.Request) -> dict[str, str]:
    """The query's fields, then the body's (berserk sends an arena's join in the query, a
    Swiss's in a JSON body)."""
    fields = dict(request.query)
    fields.update(await read_form(request))
    return fields


async def join(request: web.Request, formats: Collection[str], what: str) -> web.Response:
    """Enter the caller (``password`` if the tournament has one); an arena entry paused by a
    ``withdraw`` is resumed (lichess's "join also unpauses")."""
    player = await writer(request)
    fields = await _fields(request)
    password = fields.get("password") or None
    tournament_id, settings = await tournament_of(request, formats, what)
    desk = service(request)
    try:
        await store_call(desk.join(tournament_id, player, password=password))
    except CommandError as error:
        # Already in: a paused arena entry is resumed (the standings read only then).
        paused = (
            error.code == ErrorCode.ALREADY_ENTERED
            and settings.format == "arena"
            and entry_status(await call(desk.standings(tournament_id)), player.id) == "paused"
        )
        if not paused:
            api_error(status_of_code(error.code), error.message)
        await call(desk.pause(tournament_id, player, pause=False))
    return web.json_response({"ok": True})


async def withdraw(request: web.Request, formats: Collection[str], what: str) -> web.Response:
    """Take the caller's entry out; a started arena's entry is paused instead (lichess's "take
    a break": points kept, not paired; ``join`` resumes)."""
    player = await writer(request)
    tournament_id, settings = await tournament_of(request, formats, what)
    desk = service(request)
    if settings.format == "arena":
        view = await call(desk.view(tournament_id))
        if view["status"] == "started":
            await call(desk.pause(tournament_id, player))
            return web.json_response({"ok": True})
    await call(desk.withdraw(tournament_id, player))
    return web.json_response({"ok": True})


def _count(request: web.Request) -> int:
    raw = request.query.get("nb")
    if raw is None or raw == "":
        return MAX_RESULTS
    found = whole_number(raw, 5)
    if found is None or not 1 <= found <= MAX_RESULTS:
        api_error(400, f"nb: must be a whole number from 1 to {MAX_RESULTS}")
    return found


async def results(request: web.Request, formats: Collection[str], what: str) -> web.Response:
    """The standings (final once finished), best first, one NDJSON line a player (``nb``: the
    first that many; arena ``sheet=true``: each one's score sheet)."""
    admit_read(request)
    count = _count(request)
    sheet = flag(dict(request.query), "sheet")
    tournament_id, settings = await tournament_of(request, formats, what)
    desk = service(request)
    # The standings alone (not the whole view: no pairings, podium or berserk counts to make).
    every = [standing_view(row) for row in await call(desk.standings(tournament_id))]
    rows = every[:count]
    ratings = {row["player"]: row["rating"] for row in every}
    arena = settings.format == "arena"
    shown = {} if arena else shapes.performances(ratings, await call(desk.games(tournament_id)))
    lines: list[shapes.ArenaResultLine | shapes.SwissResultLine] = []
    for row in rows:
        if arena:
            performance = round(row["tiebreaks"].get("performance", row["rating"]))
            lines.append(shapes.arena_result(row, performance, sheet=sheet))
        else:
            lines.append(shapes.swiss_result(row, shown.get(row["player"], row["rating"])))
    body = "".join(_json_line(line) for line in lines)
    return web.Response(text=body, content_type=NDJSON)


def _json_line(line: object) -> str:
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"


def _tag(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _named(pgn: str, event: str, round_number: int) -> str:
    """A game's PGN with its tournament for ``Event`` and its round (an arena's wave) for
    ``Round``."""
    lines = []
    for line in pgn.strip().split("\n"):
        if line.startswith("[Event "):
            line = f'[Event "{_tag(event)}"]'
        elif line.startswith("[Round "):
            line = f'[Round "{round_number}"]'
        lines.append(line)
    return "\n".join(lines) + "\n\n\n"


async def games_pgn(
    request: web.Request, formats: Collection[str], what: str
) -> web.StreamResponse:
    """The tournament's finished games in pairing order: PGN, each naming the tournament
    (``Event``) and its round (``Round``), paced by the address's replay limit; or, asked with
    ``Accept: application/x-ndjson`` (berserk's default), lichess's game JSON a line
    (:func:`~.lichess_tournaments.game_line`), paced by the address's read limit."""
    admit_read(request)
    tournament_id, settings = await tournament_of(request, formats, what)
    context = request.app[CONTEXT]
    games = await call(service(request).games(tournament_id))
    as_json = NDJSON in request.headers.get("Accept", "")
    event = shapes.event_name(settings.name, settings.format)
    response = web.StreamResponse(headers={"Content-Type": NDJSON if as_json else PGN})
    response.enable_chunked_encoding()
    await response.prepare(request)
    requester = address_key(request_address(request))
    reads = context.pages.reads
    for game in games:
        if game.result is None:
            continue
        if as_json:
            record = await _record(context.store, game.game_id, reads, requester)
            if record is not None:
                line = shapes.game_line(record, settings.format, tournament_id)
                await response.write(_json_line(line).encode())
            continue
        text = await _export(context.store, game.game_id, reads, requester)
        if text is not None:
            await response.write(_named(text, event, game.round).encode())
    await response.write_eof()
    return response


async def _record(
    store: ReviewStore, game_id: str, reads: ReviewReads | None, requester: str
) -> GameRecord | None:
    """One stored game (no replay: its header and moves), a read counted against the
    requester's bucket; waits for the next token when out of them."""
    while reads is not None:
        wait = reads.admit(requester, time.monotonic())
        if wait is None:
            break
        await asyncio.sleep(wait)
    record: GameRecord | None = await store.get_game(game_id)
    return record


async def _export(
    store: ReviewStore, game_id: str, reads: ReviewReads | None, requester: str
) -> str | None:
    """One game's PGN; waits for the requester's next replay token when out of them (pacing,
    not polling: the bucket refills at a known rate); None when the game is not stored (a
    pairing whose game never started)."""
    while True:
        try:
            return await export_game(store, game_id, "pgn", reads, requester)
        except ReviewError as error:
            if error.status == 404:
                return None
            if error.status != 429 or reads is None:
                raise
            await asyncio.sleep(reads.retry_after_s)


async def trf_text(request: web.Request, formats: Collection[str], what: str) -> web.Response:
    """The tournament as a TRF-16 report (lichess's ``/swiss/{id}.trf``)."""
    admit_read(request)
    tournament_id, _ = await tournament_of(request, formats, what)
    host = request.host or ""
    text = await call(service(request).trf(tournament_id, address=host))
    return web.Response(text=text, content_type="text/plain")

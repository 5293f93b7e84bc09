"""Review API: stored games listed, shown move by move, and exported, over HTTP GET and the
websocket (docs/protocol.md, "Review and export").

The transport calls two functions and sends what they return:

* :func:`review_http` (or :func:`review_http_target` with the raw request target) for
  ``GET /api/games…`` — returns ``(status, content type, body)``;
* :func:`review_ws` for the websocket commands ``games``, ``review``, ``export``,
  ``analysis`` and ``analyse`` (:data:`REVIEW_COMMAND_TYPES`) — returns the reply frame as a
  JSON-ready dict.

A request is one of the typed values of :mod:`server.hub.review_requests`, whichever door it
came through: the websocket's ``read_frame`` makes it of a frame, :func:`review_http` of the
path and query strings, both with the one ``review_request``. Both read the store only (any
object with the :class:`ReviewStore` methods; adapters do not import each other, so the store
is handed over by ``server.app``; the records it returns are the shared
``server.rules.record`` ones). This module answers the requests and pages the store; the JSON of the games and the export texts are built by
:mod:`server.transport.review_views`, which replays the stored moves through the adjudicator.
Replays run in a worker thread: a long Dai Shogi game takes a noticeable fraction of a second
to replay, which must not stall the event loop; given a :class:`ReviewReads`, finished games
are replayed once and kept, replays pass its gate, and each requester's reads are limited
(:mod:`server.transport.review_reads`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol, cast
from urllib.parse import parse_qsl, urlsplit

from server.hub.commands import ack_of, parse_envelope
from server.hub.errors import ErrorCode, ProtocolError
from server.hub.fields import shown
from server.hub.game_ids import GAME_ID_PATTERN
from server.hub.incoming import REVIEW_COMMAND_TYPES
from server.hub.messages import Message, MessageJson, error_message
from server.hub.review_payloads import AnalysisView, ExportPayload, GameDetailView, GamesPayload
from server.hub.review_requests import (
    DEFAULT_LIMIT,
    EXPORT_FORMATS,
    MAX_LIMIT,
    MAX_OFFSET,
    AnalyseRequest,
    ExportRequest,
    GameAnalysisRequest,
    ListGamesRequest,
    ReviewRequest,
    ShowGameRequest,
    review_request,
)
from server.rules import Game
from server.rules.record import GameInfo, GamePage, GameRecord, GameStatus, ResultCode
from server.transport.analysis_api import (
    AnalysisBackend,
    AnalysisRequestError,
    Requester,
    analysis_path_game,
    analysis_view,
    request_analysis,
)
from server.transport.review_reads import ReplayQueueFull, ReviewReads, run_sliced
from server.transport.review_views import (
    ReviewError,
    bad_request,
    export_text,
    game_detail,
    game_summary,
    replay_steps,
    replayed,
)

__all__ = [
    "CONTENT_TYPES",
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "MAX_OFFSET",
    "REVIEW_COMMAND_TYPES",
    "REVIEW_PREFIX",
    "ReviewError",
    "ReviewStore",
    "is_review_path",
    "review_http",
    "review_http_target",
    "review_ws",
]

logger = logging.getLogger(__name__)

REVIEW_PREFIX = "/api/games"

#: The store's largest page; deeper offsets walk several pages.
STORE_PAGE = 500

JSON_TYPE = "application/json"
CONTENT_TYPES = dict(
    zip(
        EXPORT_FORMATS,
        (
            "application/x-chess-pgn; charset=utf-8",
            "text/plain; charset=utf-8",
            "text/plain; charset=utf-8",
        ),
        strict=True,
    )
)
"""The content type of each export format (``pgn``, ``kif``, ``usi``)."""

_GAME_PATH = re.compile(r"/api/games/([^/.]+)(?:\.([A-Za-z0-9]+))?")


# ------------------------------------------------------------------- store interface


class ReviewStore(AnalysisBackend, Protocol):
    """What the review API needs: the game list, and a game with its analysis (those from
    :class:`~server.transport.analysis_api.AnalysisBackend`); ``server.store.Store`` has them."""

    async def list_games(
        self,
        *,
        player_name: str | None = None,
        variant: str | None = None,
        result: ResultCode | None = None,
        status: GameStatus | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> GamePage: ...


# ---------------------------------------------------------------------------- errors


def _not_found(game_id: str) -> ReviewError:
    return ReviewError(404, ErrorCode.NOT_FOUND, f"no game with id {game_id!r}")


def _refused(error: ProtocolError) -> ReviewError:
    """A request whose fields :func:`~server.hub.review_requests.review_request` refused: 404
    for a game id that cannot name a game, else 400."""
    return ReviewError(404 if error.code == ErrorCode.NOT_FOUND else 400, error.code, str(error))


def _game_id(value: object) -> str:
    """A syntactically valid game id; anything else cannot name a stored game (404)."""
    if not isinstance(value, str) or not GAME_ID_PATTERN.fullmatch(value):
        raise ReviewError(404, ErrorCode.NOT_FOUND, f"no game with id {shown(value)}")
    return value


# ------------------------------------------------------------------------ operations


async def _from_store(call: Any) -> Any:
    """Await a store call: its ValueError is the client's (400), any other failure is ours
    (503, logged): the database is down or refused."""
    try:
        return await call
    except ValueError as exc:
        raise bad_request(str(exc)) from exc
    except Exception as exc:
        logger.exception("review: store call failed")
        raise ReviewError(
            503, ErrorCode.UNAVAILABLE, "game storage is unavailable, try again later"
        ) from exc


async def list_games(store: ReviewStore, query: ListGamesRequest) -> GamesPayload:
    """One page of games, newest first. Offsets walk the store's keyset pages."""
    wanted = query.offset + query.limit
    rows: list[GameInfo] = []
    cursor = query.cursor
    while True:
        page = cast(
            GamePage,
            await _from_store(
                store.list_games(
                    player_name=query.player,
                    variant=query.variant,
                    result=query.result,
                    status=query.status,
                    since=query.since,
                    until=query.until,
                    limit=min(STORE_PAGE, wanted - len(rows)),
                    cursor=cursor,
                )
            ),
        )
        rows.extend(page.games)
        cursor = page.next_cursor
        if cursor is None or len(rows) >= wanted:
            break
    games = rows[query.offset :]
    return {
        "games": [game_summary(g) for g in games],
        "limit": query.limit,
        "offset": query.offset,
        "next_offset": wanted if cursor is not None and wanted <= MAX_OFFSET else None,
        "next_cursor": cursor,
    }


async def _stored(store: ReviewStore, game_id: str) -> GameRecord:
    stored = cast(GameRecord | None, await _from_store(store.get_game(game_id)))
    if stored is None:
        raise _not_found(game_id)
    return stored


def _admit(reads: ReviewReads | None, requester: str | None, kind: str) -> None:
    """Refuse (429 ``rate_limited``) a read over the requester's limit (:mod:`review_reads`)."""
    if reads is None or requester is None:
        return
    wait = reads.admit(requester, time.monotonic(), kind)
    if wait is not None:
        what = "reads" if kind == "read" else "reads of games not in the cache"
        raise ReviewError(
            429, ErrorCode.RATE_LIMITED, f"too many stored-game {what}; try again in {wait} s"
        )


async def _replay(
    store: ReviewStore, game_id: str, reads: ReviewReads | None, requester: str | None
) -> tuple[GameRecord, Game]:
    """A stored game and its replay: kept ones from the cache, others read and replayed on the
    loop a slice at a time, one at a time (:mod:`review_reads`), counted against the
    requester's replay limit; a finished game's replay is kept."""
    if reads is None:
        stored = await _stored(store, _game_id(game_id))
        return stored, await asyncio.to_thread(replayed, stored)
    kept = reads.game(game_id)
    if kept is not None:
        return kept
    _admit(reads, requester, "replay")
    game_id = _game_id(game_id)
    try:
        async with reads.turn():
            kept = reads.game(game_id)  # replayed while this request waited for its turn
            if kept is not None:
                return kept
            # Read in turn too: on SQLite the moves' commits share the one connection.
            stored = await _stored(store, game_id)
            game = await run_sliced(replay_steps(stored))
            reads.replays += 1
    except ReplayQueueFull:
        raise _busy(reads) from None
    reads.keep_game(stored, game)
    return stored, game


def _busy(reads: ReviewReads) -> ReviewError:
    """The refusal of a replay when ``review_replay_queue`` wait already."""
    return ReviewError(
        429,
        ErrorCode.RATE_LIMITED,
        f"the server is replaying too many stored games; try again in {reads.retry_after_s} s",
    )


async def _game_view(
    store: ReviewStore,
    game_id: str,
    ply: int | None,
    reads: ReviewReads | None,
    requester: str | None,
) -> tuple[GameDetailView, bytes]:
    """:func:`show_game`'s view and its JSON body (kept for a finished game: a later request
    gets the very same bytes)."""
    key = ("view", game_id, ply)
    kept = None if reads is None else reads.answer(key)
    if kept is not None:
        return cast(tuple[GameDetailView, bytes], kept)
    stored, game = await _replay(store, game_id, reads, requester)
    view = game_detail(stored, ply, game)  # from the replay: about a millisecond
    body = _json_body(view)
    if reads is not None:
        reads.keep_answer(stored, key, (view, body), len(body))
    return view, body


async def show_game(
    store: ReviewStore,
    game_id: str,
    ply: int | None = None,
    reads: ReviewReads | None = None,
    requester: str | None = None,
) -> GameDetailView:
    """One game: summary, PGN-style headers, every move with its clock, and with ``ply`` the
    position after that many moves."""
    return (await _game_view(store, game_id, ply, reads, requester))[0]


async def export_game(
    store: ReviewStore,
    game_id: str,
    fmt: str,
    reads: ReviewReads | None = None,
    requester: str | None = None,
) -> str:
    """The game as PGN, KIF or USI text (kept for a finished game, under the analysis it
    includes: an analysis finished later is a new text)."""
    if fmt not in CONTENT_TYPES:
        raise bad_request(f"format must be one of {', '.join(CONTENT_TYPES)}, got {shown(fmt)}")
    analysis = await _from_store(store.get_analysis(_game_id(game_id)))
    evals = tuple(analysis.evals) if analysis is not None and analysis.state == "done" else ()
    key = ("export", game_id, fmt, evals)
    kept = None if reads is None else reads.answer(key)
    if kept is not None:
        return cast(str, kept)
    stored, game = await _replay(store, game_id, reads, requester)
    # Writing a long game's KIF takes 10-20 ms: in a thread, behind the gate, too.
    if reads is None:
        return await asyncio.to_thread(export_text, stored, fmt, evals, game)
    try:
        async with reads.turn():
            text = await asyncio.to_thread(export_text, stored, fmt, evals, game)
    except ReplayQueueFull:
        raise _busy(reads) from None
    reads.keep_answer(stored, key, text, len(text))
    return text


# ------------------------------------------------------------------------------ HTTP


def is_review_path(path: str) -> bool:
    """Whether an HTTP GET path (without its query) belongs to the review API."""
    return (
        path == REVIEW_PREFIX
        or path.startswith(REVIEW_PREFIX + "/")
        or analysis_path_game(path) is not None
    )


def _json_body(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def _error_response(error: ReviewError) -> tuple[int, str, bytes]:
    return (
        error.status,
        JSON_TYPE,
        _json_body({"error": {"code": error.code, "message": error.message}}),
    )


async def review_http(
    store: ReviewStore,
    path: str,
    query: Mapping[str, str],
    reads: ReviewReads | None = None,
    requester: str | None = None,
) -> tuple[int, str, bytes]:
    """Answer ``GET path?query`` (query already decoded, one value per name) for ``requester``
    (:func:`~server.transport.review_reads.address_key`; ``None``: not rate-limited).

    ``/api/games`` lists (JSON), ``/api/games/{id}`` shows one game (JSON, optional ``ply``),
    ``/api/games/{id}.pgn|.kif|.usi`` exports. Returns ``(status, content type, body)``:
    200, 400 (bad filter, ply, unknown field, KIF/USI of a chess game), 404 (unknown game or
    path), 429 (over the requester's read limits), 500 (a stored game that does not replay),
    503 (database unavailable).
    """
    analysed = analysis_path_game(path)
    try:
        _admit(reads, requester, "read")
        if analysed is not None:
            request = review_request("analysis", query, given={"game": analysed})
            return 200, JSON_TYPE, _json_body(await _answer(store, request, None, reads, requester))
        if path in (REVIEW_PREFIX, REVIEW_PREFIX + "/"):
            body = await list_games(store, cast(ListGamesRequest, review_request("games", query)))
            return 200, JSON_TYPE, _json_body(body)
        match = _GAME_PATH.fullmatch(path)
        if match is None:
            raise ReviewError(404, ErrorCode.NOT_FOUND, f"no such resource {shown(path)}")
        game_id, fmt = match.groups()
        if fmt is None:
            # The game's path is /api/games/{id}: its query's fields are the "game"'s.
            one = cast(
                ShowGameRequest,
                review_request("review", query, given={"game": game_id}, where="game"),
            )
            view = await _game_view(store, one.game_id, one.ply, reads, requester)
            return 200, JSON_TYPE, view[1]
        fmt = fmt.lower()
        if fmt not in CONTENT_TYPES:
            raise ReviewError(
                404, ErrorCode.NOT_FOUND, f"no export format {shown(fmt)} (use pgn, kif or usi)"
            )
        export = cast(
            ExportRequest, review_request("export", query, given={"game": game_id, "format": fmt})
        )
        text = await export_game(store, export.game_id, export.format, reads, requester)
        return 200, CONTENT_TYPES[export.format], text.encode()
    except ProtocolError as error:
        return _error_response(_refused(error))
    except ReviewError as error:
        return _error_response(error)


async def review_http_target(
    store: ReviewStore,
    target: str,
    reads: ReviewReads | None = None,
    requester: str | None = None,
) -> tuple[int, str, bytes]:
    """:func:`review_http` for a raw request target such as ``/api/games?variant=spartan``
    (percent-decoded here; a name given twice is a 400)."""
    parts = urlsplit(target)
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        return _error_response(bad_request("the query is not valid percent-encoded UTF-8"))
    query: dict[str, str] = {}
    for name, value in pairs:
        if name in query:
            return _error_response(bad_request(f"field {shown(name)} is given more than once"))
        query[name] = value
    return await review_http(store, parts.path, query, reads, requester)


# ---------------------------------------------------------------------------- answers


async def _answer(
    store: ReviewStore,
    request: ReviewRequest,
    player: Requester | None,
    reads: ReviewReads | None,
    requester: str | None,
) -> GamesPayload | GameDetailView | ExportPayload | AnalysisView:
    """The answer's payload to ``request`` (whose read was admitted), for ``player``."""
    match request:
        case ListGamesRequest():
            return await list_games(store, request)
        case ShowGameRequest(game_id=game_id, ply=ply):
            return await show_game(store, game_id, ply, reads, requester)
        case ExportRequest(game_id=game_id, format=fmt):
            text = await export_game(store, game_id, fmt, reads, requester)
            return {
                "game": game_id,
                "format": fmt,
                "content_type": CONTENT_TYPES[fmt],
                "text": text,
            }
    try:
        if isinstance(request, GameAnalysisRequest):
            return await analysis_view(store, request.game_id)
        assert isinstance(request, AnalyseRequest)
        limits = {"movetime_ms": request.movetime_ms, "depth": request.depth}
        return await request_analysis(store, request.game_id, limits, player)
    except AnalysisRequestError as exc:
        raise ReviewError(exc.status, exc.code, exc.message) from exc


# ------------------------------------------------------------------------- websocket


async def review_ws(
    store: ReviewStore,
    frame: ReviewRequest | Mapping[str, object],
    player: Requester | None = None,
    reads: ReviewReads | None = None,
    requester: str | None = None,
) -> MessageJson:
    """Answer one review request — the typed value :func:`~server.hub.incoming.read_frame`
    made of a websocket frame whose type is in :data:`REVIEW_COMMAND_TYPES` (or the decoded
    frame ``{"t": type, "d": payload, "a": ack}`` itself, read here by the same
    :func:`~server.hub.review_requests.review_request`) — and return the reply frame (wire
    form).

    * ``games`` (listing fields as in HTTP, JSON-typed) → ``{"t": "games", "d": page}``;
    * ``review`` ``{"game", "ply"?}`` → ``{"t": "review", "d": game}``;
    * ``export`` ``{"game", "format"}`` → ``{"t": "export", "d": {"game", "format",
      "content_type", "text"}}``;
    * ``analysis`` ``{"game"}`` → ``{"t": "analysis", "d": view}`` and ``analyse`` ``{"game",
      "movetime_ms"?, "depth"?}`` (a request, in the name of the logged-in ``player``, who
      must be registered) → ``{"t": "analyse", "d": view}``
      (:mod:`server.transport.analysis_api`; further codes ``no_analysis``,
      ``analysis_exists``, ``game_not_finished``, ``not_authenticated``, ``registered_only``,
      ``analysis_running``, ``analysis_quota``, ``analysis_too_long``).

    Refusals are ``{"t": "error", "d": {"code", "message"}}`` with the codes ``bad_request``,
    ``not_found``, ``unsupported_format``, ``corrupt_record``, ``unavailable``,
    ``rate_limited`` (over ``requester``'s read limits). The ack id ``a`` is echoed in either
    case (when it is a valid one).
    """
    if not isinstance(frame, ReviewRequest):
        try:
            envelope = parse_envelope(frame)
            if envelope.kind not in REVIEW_COMMAND_TYPES:
                raise ProtocolError(f"unknown review command {shown(envelope.kind)}")
            frame = review_request(envelope.kind, envelope.payload, envelope.ack)
        except ProtocolError as error:
            return error_message(error.code, str(error), ack_of(frame)).to_json_obj()
    try:
        _admit(reads, requester, "read")
        data = await _answer(store, frame, player, reads, requester)
    except ReviewError as error:
        return error_message(error.code, error.message, frame.ack).to_json_obj()
    return Message(frame.kind, data, a=frame.ack).to_json_obj()

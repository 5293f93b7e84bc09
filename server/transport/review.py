"""Review API: stored games listed, shown move by move, and exported, over HTTP GET and the
websocket (docs/protocol.md, "Review and export").

The transport calls two functions and sends what they return:

* :func:`review_http` (or :func:`review_http_target` with the raw request target) for
  ``GET /api/games…`` — returns ``(status, content type, body)``;
* :func:`review_ws` for the websocket commands ``games``, ``review`` and ``export``
  (:data:`REVIEW_COMMAND_TYPES`) — returns the reply frame as a JSON-ready dict.

Both read the store only (any object with the :class:`ReviewStore` methods; adapters do
not import each other, so the store is handed over by ``server.app``; the records it returns
are the shared ``server.rules.record`` ones). This module checks the requests and pages
the store; the JSON of the games and the export texts are built by
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, cast
from urllib.parse import parse_qsl, urlsplit

from server.hub.commands import Envelope, ack_of, parse_envelope, shown, valid_text
from server.hub.errors import ErrorCode, ProtocolError
from server.hub.game_ids import GAME_ID_PATTERN
from server.hub.incoming import REVIEW_COMMAND_TYPES
from server.hub.messages import Message, MessageJson, error_message
from server.hub.payloads import AnalysisView, ExportPayload, GameDetailView, GamesPayload
from server.hub.user_text import text_problem
from server.rules import VARIANT_NAMES, Game
from server.rules.record import (
    GAME_STATUSES,
    RESULT_CODES,
    GameInfo,
    GamePage,
    GameRecord,
    GameStatus,
    ResultCode,
)
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

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_OFFSET = 10_000
#: The store's largest page; deeper offsets walk several pages.
STORE_PAGE = 500

JSON_TYPE = "application/json"
CONTENT_TYPES = {
    "pgn": "application/x-chess-pgn; charset=utf-8",
    "kif": "text/plain; charset=utf-8",
    "usi": "text/plain; charset=utf-8",
}

MAX_NAME_LENGTH = 64
MAX_TEXT_LENGTH = 256
"""Longest text parameter (a cursor is about 60 characters)."""

_CURSOR = re.compile(r"[0-9A-Za-z_-]{1,256}")
_GAME_PATH = re.compile(r"/api/games/([^/.]+)(?:\.([A-Za-z0-9]+))?")
_LIST_FIELDS = frozenset(
    {"player", "variant", "result", "status", "since", "until", "limit", "offset", "cursor"}
)


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


# --------------------------------------------------------------------- request fields


@dataclass(frozen=True, slots=True)
class ListQuery:
    """Validated filters and page of a listing."""

    player: str | None = None
    variant: str | None = None
    result: ResultCode | None = None
    status: GameStatus | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    cursor: str | None = None


def _text(name: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise bad_request(f"{name} must be a non-empty string")
    if len(value) > MAX_TEXT_LENGTH or not valid_text(value):
        raise bad_request(
            f"{name} must be valid Unicode text without NUL, at most {MAX_TEXT_LENGTH} characters"
        )
    problem = text_problem(value)  # a name, a variant, a date: never a control character
    if problem is not None:
        raise bad_request(f"{name} {problem}")
    return value


def _integer(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, str):
        if not re.fullmatch(r"\d{1,9}", value):
            raise bad_request(
                f"{name} must be an integer between {low} and {high}, got {shown(value)}"
            )
        number = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise bad_request(f"{name} must be an integer between {low} and {high}")
    if not low <= number <= high:
        raise bad_request(f"{name} must be an integer between {low} and {high}, got {number}")
    return number


def _moment(name: str, value: object) -> datetime:
    """An ISO 8601 date or date-time; without a zone it is UTC (a date means its midnight)."""
    text = _text(name, value)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise bad_request(
            f"{name} must be an ISO 8601 date or date-time (like 2024-05-01 or "
            f"2024-05-01T12:00:00Z), got {shown(text)}"
        ) from None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        # In UTC, as the store compares: 0001-01-01T00:00:00+01:00 is before year 1.
        return moment.astimezone(UTC)
    except OverflowError:
        raise bad_request(
            f"{name} is out of range: {shown(text)} is not between years 1 and 9999 in UTC"
        ) from None


def _choice(name: str, value: object, options: Sequence[str]) -> str:
    text = _text(name, value)
    if text not in options:
        raise bad_request(f"{name} must be one of {', '.join(options)}, got {shown(text)}")
    return text


def parse_list_query(fields: Mapping[str, object]) -> ListQuery:
    """Check listing fields (HTTP query strings or websocket JSON values); raise ReviewError."""
    _only(fields, _LIST_FIELDS, "games")
    player = variant = cursor = None
    if "player" in fields:
        player = _text("player", fields["player"])
        if len(player) > MAX_NAME_LENGTH:
            raise bad_request(f"player must be at most {MAX_NAME_LENGTH} characters")
    if "variant" in fields:
        variant = _choice("variant", fields["variant"], VARIANT_NAMES)
    result = status = None
    if "result" in fields:
        result = cast(ResultCode, _choice("result", fields["result"], RESULT_CODES))
    if "status" in fields:
        status = cast(GameStatus, _choice("status", fields["status"], GAME_STATUSES))
    since = _moment("since", fields["since"]) if "since" in fields else None
    until = _moment("until", fields["until"]) if "until" in fields else None
    if since is not None and until is not None and since >= until:
        raise bad_request("since must be earlier than until")
    limit = _integer("limit", fields["limit"], 1, MAX_LIMIT) if "limit" in fields else DEFAULT_LIMIT
    offset = _integer("offset", fields["offset"], 0, MAX_OFFSET) if "offset" in fields else 0
    if "cursor" in fields:
        cursor = _text("cursor", fields["cursor"])
        if not _CURSOR.fullmatch(cursor):
            raise bad_request("cursor must be the next_cursor of an earlier page")
    return ListQuery(player, variant, result, status, since, until, limit, offset, cursor)


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


async def list_games(store: ReviewStore, query: ListQuery) -> GamesPayload:
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
            _only(query, set(), "analysis")
            try:
                return 200, JSON_TYPE, _json_body(await analysis_view(store, analysed))
            except AnalysisRequestError as exc:
                raise ReviewError(exc.status, exc.code, exc.message) from exc
        if path in (REVIEW_PREFIX, REVIEW_PREFIX + "/"):
            body = await list_games(store, parse_list_query(query))
            return 200, JSON_TYPE, _json_body(body)
        match = _GAME_PATH.fullmatch(path)
        if match is None:
            raise ReviewError(404, ErrorCode.NOT_FOUND, f"no such resource {shown(path)}")
        game_id, fmt = match.groups()
        if fmt is None:
            _only(query, {"ply"}, "game")
            ply = _integer("ply", query["ply"], 0, 100_000) if "ply" in query else None
            return 200, JSON_TYPE, (await _game_view(store, game_id, ply, reads, requester))[1]
        fmt = fmt.lower()
        if fmt not in CONTENT_TYPES:
            raise ReviewError(
                404, ErrorCode.NOT_FOUND, f"no export format {shown(fmt)} (use pgn, kif or usi)"
            )
        _only(query, set(), "export")
        text = await export_game(store, game_id, fmt, reads, requester)
        return 200, CONTENT_TYPES[fmt], text.encode()
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


# ------------------------------------------------------------------------- websocket


def _only(payload: Mapping[str, object], allowed: set[str] | frozenset[str], kind: str) -> None:
    unknown = sorted(shown(name) for name in set(payload) - allowed)
    if unknown:
        raise bad_request(f"{kind}: unknown field(s) {', '.join(unknown)}")


async def review_ws(
    store: ReviewStore,
    frame: Envelope | Mapping[str, object],
    player: Requester | None = None,
    reads: ReviewReads | None = None,
    requester: str | None = None,
) -> MessageJson:
    """Answer one websocket frame ``{"t": type, "d": payload, "a": ack}`` (or its checked
    envelope: the :class:`~server.hub.incoming.ReviewRequest` that
    :func:`~server.hub.incoming.read_frame` made of it) whose type is in
    :data:`REVIEW_COMMAND_TYPES` (the hub's vocabulary); return the reply frame (wire form).

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
    if not isinstance(frame, Envelope):
        try:
            frame = parse_envelope(frame)
        except ProtocolError as error:
            return error_message(error.code, str(error), ack_of(frame)).to_json_obj()
    kind, payload, ack = frame.kind, frame.payload, frame.ack
    data: GamesPayload | GameDetailView | ExportPayload | AnalysisView
    try:
        _admit(reads, requester, "read")
        if kind == "games":
            data = await list_games(store, parse_list_query(payload))
        elif kind == "review":
            _only(payload, {"game", "ply"}, "review")
            if payload.get("game") is None:
                raise bad_request("review: field 'game' is required")
            ply = (
                _integer("ply", payload["ply"], 0, 100_000)
                if payload.get("ply") is not None
                else None
            )
            data = await show_game(store, _text("game", payload["game"]), ply, reads, requester)
        elif kind == "export":
            _only(payload, {"game", "format"}, "export")
            if payload.get("game") is None or payload.get("format") is None:
                raise bad_request("export: fields 'game' and 'format' are required")
            fmt = _choice("format", payload["format"], tuple(CONTENT_TYPES))
            game_id = _text("game", payload["game"])
            text = await export_game(store, game_id, fmt, reads, requester)
            data = {
                "game": game_id,
                "format": fmt,
                "content_type": CONTENT_TYPES[fmt],
                "text": text,
            }
        elif kind in ("analysis", "analyse"):
            allowed = {"game"} if kind == "analysis" else {"game", "movetime_ms", "depth"}
            _only(payload, allowed, kind)
            if payload.get("game") is None:
                raise bad_request(f"{kind}: field 'game' is required")
            game_id = _game_id(_text("game", payload["game"]))
            try:
                if kind == "analysis":
                    data = await analysis_view(store, game_id)
                else:
                    data = await request_analysis(store, game_id, payload, player)
            except AnalysisRequestError as exc:
                raise ReviewError(exc.status, exc.code, exc.message) from exc
        else:
            raise bad_request(f"unknown review command {shown(kind)}")
    except ReviewError as error:
        return error_message(error.code, error.message, ack).to_json_obj()
    return Message(kind, data, a=ack).to_json_obj()

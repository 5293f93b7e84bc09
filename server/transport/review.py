"""Review API: stored games listed, shown move by move, and exported, over HTTP GET and the
websocket (docs/protocol.md, "Review and export").

The transport calls two functions and sends what they return:

* :func:`review_http` (or :func:`review_http_target` with the raw request target) for
  ``GET /api/games…`` — returns ``(status, content type, body)``;
* :func:`review_ws` for the websocket commands ``games``, ``review`` and ``export``
  (:data:`REVIEW_COMMAND_TYPES`) — returns the reply frame as a JSON-ready dict.

Both read the store only (any object with the :class:`ReviewStore` methods; adapters do
not import each other, so the store is handed over by ``server.app``; the records it returns
are the shared ``server.rules.record`` ones) and replay stored moves through the adjudicator
to compute positions, headers and exports. Replays run in a worker thread: a long Dai Shogi game takes
a noticeable fraction of a second to replay, which must not stall the event loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, cast
from urllib.parse import parse_qsl, urlsplit

from server.hub.commands import Envelope, ack_of, parse_envelope, shown, valid_text
from server.hub.errors import ErrorCode, ProtocolError
from server.hub.game_ids import GAME_ID_PATTERN
from server.hub.messages import Message, MessageJson, error_message
from server.hub.payloads import (
    AnalysisView,
    ExportPayload,
    GameDetailView,
    GamesPayload,
    GameSummaryView,
    StoredMoveView,
    StoredPlayerView,
    StoredPositionView,
    StoredTimeControlView,
)
from server.rules import SIDE_NAMES, VARIANT_NAMES, Game, RulesError, Variant, get_variant
from server.rules.analysis import PlyEval
from server.rules.export import (
    format_time_control,
    pgn_tags,
    replay,
    write_kif,
    write_pgn,
    write_usi,
)
from server.rules.record import (
    GAME_STATUSES,
    RESULT_CODES,
    GameInfo,
    GamePage,
    GameRecord,
    GameStatus,
    MoveRecord,
    ResultCode,
)
from server.rules.time_control import Fischer, TimeControl
from server.transport.analysis_api import (
    AnalysisRequestError,
    AnalysisStore,
    analysis_path_game,
    analysis_view,
    request_analysis,
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
REVIEW_COMMAND_TYPES: frozenset[str] = frozenset(
    {"games", "review", "export", "analysis", "analyse"}
)
"""Websocket command types answered by :func:`review_ws` (not by the hub)."""

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


class ReviewStore(AnalysisStore, Protocol):
    """What the review API needs: the game list, and a game with its analysis (those from
    :class:`~server.transport.analysis_api.AnalysisStore`); ``server.store.Store`` has them."""

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


class ReviewError(Exception):
    """A refused review request: HTTP ``status`` and a stable ``code`` for the websocket."""

    def __init__(self, status: int, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _bad(message: str) -> ReviewError:
    return ReviewError(400, ErrorCode.BAD_REQUEST, message)


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
        raise _bad(f"{name} must be a non-empty string")
    if len(value) > MAX_TEXT_LENGTH or not valid_text(value):
        raise _bad(
            f"{name} must be valid Unicode text without NUL, at most {MAX_TEXT_LENGTH} characters"
        )
    return value


def _integer(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, str):
        if not re.fullmatch(r"\d{1,9}", value):
            raise _bad(f"{name} must be an integer between {low} and {high}, got {shown(value)}")
        number = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise _bad(f"{name} must be an integer between {low} and {high}")
    if not low <= number <= high:
        raise _bad(f"{name} must be an integer between {low} and {high}, got {number}")
    return number


def _moment(name: str, value: object) -> datetime:
    """An ISO 8601 date or date-time; without a zone it is UTC (a date means its midnight)."""
    text = _text(name, value)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise _bad(
            f"{name} must be an ISO 8601 date or date-time (like 2024-05-01 or "
            f"2024-05-01T12:00:00Z), got {shown(text)}"
        ) from None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        # In UTC, as the store compares: 0001-01-01T00:00:00+01:00 is before year 1.
        return moment.astimezone(UTC)
    except OverflowError:
        raise _bad(
            f"{name} is out of range: {shown(text)} is not between years 1 and 9999 in UTC"
        ) from None


def _choice(name: str, value: object, options: Sequence[str]) -> str:
    text = _text(name, value)
    if text not in options:
        raise _bad(f"{name} must be one of {', '.join(options)}, got {shown(text)}")
    return text


def parse_list_query(fields: Mapping[str, object]) -> ListQuery:
    """Check listing fields (HTTP query strings or websocket JSON values); raise ReviewError."""
    _only(fields, _LIST_FIELDS, "games")
    player = variant = cursor = None
    if "player" in fields:
        player = _text("player", fields["player"])
        if len(player) > MAX_NAME_LENGTH:
            raise _bad(f"player must be at most {MAX_NAME_LENGTH} characters")
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
        raise _bad("since must be earlier than until")
    limit = _integer("limit", fields["limit"], 1, MAX_LIMIT) if "limit" in fields else DEFAULT_LIMIT
    offset = _integer("offset", fields["offset"], 0, MAX_OFFSET) if "offset" in fields else 0
    if "cursor" in fields:
        cursor = _text("cursor", fields["cursor"])
        if not _CURSOR.fullmatch(cursor):
            raise _bad("cursor must be the next_cursor of an earlier page")
    return ListQuery(player, variant, result, status, since, until, limit, offset, cursor)


def _game_id(value: object) -> str:
    """A syntactically valid game id; anything else cannot name a stored game (404)."""
    if not isinstance(value, str) or not GAME_ID_PATTERN.fullmatch(value):
        raise ReviewError(404, ErrorCode.NOT_FOUND, f"no game with id {shown(value)}")
    return value


# -------------------------------------------------------------------------- JSON views


def _iso(moment: datetime | None) -> str | None:
    """:func:`_utc_text`, or None."""
    return None if moment is None else _utc_text(moment)


def _utc_text(moment: datetime) -> str:
    """UTC ISO 8601 with ``Z`` (a naive datetime from the database is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _stored_player(
    name: str, store_id: int | None, before: int | None, after: int | None, *, bot: bool
) -> StoredPlayerView:
    view: StoredPlayerView = {
        "name": name,
        "id": store_id,
        "rating_before": before,
        "rating_after": after,
    }
    if bot:
        view["bot"] = True
    return view


def stored_time_control_view(control: TimeControl) -> StoredTimeControlView:
    """The review API's ``time_control`` object: the ``games`` table's clock fields (byoyomi's
    period as ``byoyomi_ms``, the other kind's fields 0) and the PGN text."""
    if isinstance(control, Fischer):
        increment_ms, byoyomi_ms, periods = control.increment_ms, 0, 0
    else:
        increment_ms, byoyomi_ms, periods = 0, control.period_ms, control.periods
    return {
        "kind": control.kind,
        "base_ms": control.base_ms,
        "increment_ms": increment_ms,
        "byoyomi_ms": byoyomi_ms,
        "periods": periods,
        "text": format_time_control(control),
    }


def game_summary(info: GameInfo) -> GameSummaryView:
    """The JSON form of a listed game (no moves)."""
    return {
        "id": info.id,
        "variant": info.variant,
        "status": info.status,
        "result": info.result,
        "termination": info.termination,
        "rated": info.rated,
        "speed": info.speed,
        "time_control": stored_time_control_view(info.time_control),
        "first": _stored_player(
            info.first_name,
            info.first_player_id,
            info.first_rating_before,
            info.first_rating_after,
            bot=info.first_bot,
        ),
        "second": _stored_player(
            info.second_name,
            info.second_player_id,
            info.second_rating_before,
            info.second_rating_after,
            bot=info.second_bot,
        ),
        "plies": info.plies,
        "start_fen": info.start_fen,
        "final_fen": info.final_fen,
        "created_at": _utc_text(info.created_at),
        "started_at": _iso(info.started_at),
        "finished_at": _iso(info.finished_at),
    }


def _variant(record: GameInfo) -> Variant:
    try:
        return get_variant(record.variant)
    except KeyError:
        raise ReviewError(
            500,
            ErrorCode.CORRUPT_RECORD,
            f"game {record.id} has an unknown variant {record.variant!r}",
        ) from None


def _replayed(record: GameRecord) -> Game:
    variant = _variant(record)
    try:
        return replay(variant, record.start_fen, (m.uci for m in record.moves))
    except RulesError as exc:
        raise ReviewError(
            500,
            ErrorCode.CORRUPT_RECORD,
            f"game {record.id}: the stored moves do not replay: {exc}",
        ) from exc


def _position_view(game: Game, ply: int) -> StoredPositionView:
    position = game.position_at(ply)
    view: StoredPositionView = {
        "ply": ply,
        "fen": position.fen(),
        "turn": SIDE_NAMES[position.turn],
        "move": game.moves[ply - 1] if ply else None,
        "check": position.is_check(),
    }
    if game.variant.family == "shogi":
        view["sfen"] = position.sfen()
    return view


def _detail(record: GameRecord, ply: int | None) -> GameDetailView:
    """The JSON form of one game (runs in a worker thread: it replays the moves)."""
    game = _replayed(record)
    if ply is not None and ply > game.ply:
        raise _bad(f"ply must be between 0 and {game.ply} for this game, got {ply}")
    view: GameDetailView = {
        **game_summary(record),
        "headers": pgn_tags(record, game),
        "formats": _formats(game.variant),
        "moves": [
            _stored_move(move, uci, display)
            for uci, display, move in zip(game.moves, game.displays, record.moves)
        ],
    }
    if ply is not None:
        view["position"] = _position_view(game, ply)
    return view


def _stored_move(move: MoveRecord, uci: str, display: str) -> StoredMoveView:
    """A stored move as the review shows it: the record's fields under the names the live
    ``move`` event gives them (``MoveFields``), ``uci`` and ``display`` as the replay spells
    them, ``played_at`` as ``at``."""
    return {
        "ply": move.ply,
        "uci": uci,
        "display": display,
        "spent_ms": move.spent_ms,
        "clock_ms": move.clock_ms,
        "periods_left": move.periods_left,
        "at": _iso(move.played_at),
    }


def _formats(variant: Variant) -> list[str]:
    return ["pgn", "kif", "usi"] if variant.family == "shogi" else ["pgn"]


def _export(record: GameRecord, fmt: str, analysis: Sequence[PlyEval] = ()) -> str:
    """The export text (runs in a worker thread), with a finished analysis's comments."""
    variant = _variant(record)
    if fmt not in _formats(variant):
        raise ReviewError(
            400,
            ErrorCode.UNSUPPORTED_FORMAT,
            f"{fmt.upper()} export is for shogi variants; {variant.title} games export as PGN",
        )
    game = _replayed(record)
    if fmt == "pgn":
        return write_pgn(record, game, analysis=analysis)
    if fmt == "kif":
        return write_kif(record, game, analysis=analysis)
    return write_usi(record, game)


# ------------------------------------------------------------------------ operations


async def _from_store(call: Any) -> Any:
    """Await a store call: its ValueError is the client's (400), any other failure is ours
    (503, logged): the database is down or refused."""
    try:
        return await call
    except ValueError as exc:
        raise _bad(str(exc)) from exc
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


async def show_game(store: ReviewStore, game_id: str, ply: int | None = None) -> GameDetailView:
    """One game: summary, PGN-style headers, every move with its clock, and with ``ply`` the
    position after that many moves."""
    stored = await _stored(store, _game_id(game_id))
    return await asyncio.to_thread(_detail, stored, ply)


async def export_game(store: ReviewStore, game_id: str, fmt: str) -> str:
    """The game as PGN, KIF or USI text."""
    if fmt not in CONTENT_TYPES:
        raise _bad(f"format must be one of {', '.join(CONTENT_TYPES)}, got {shown(fmt)}")
    stored = await _stored(store, _game_id(game_id))
    analysis = await _from_store(store.get_analysis(stored.id))
    evals = analysis.evals if analysis is not None and analysis.state == "done" else ()
    return await asyncio.to_thread(_export, stored, fmt, evals)


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
    store: ReviewStore, path: str, query: Mapping[str, str]
) -> tuple[int, str, bytes]:
    """Answer ``GET path?query`` (query already decoded, one value per name).

    ``/api/games`` lists (JSON), ``/api/games/{id}`` shows one game (JSON, optional ``ply``),
    ``/api/games/{id}.pgn|.kif|.usi`` exports. Returns ``(status, content type, body)``:
    200, 400 (bad filter, ply, unknown field, KIF/USI of a chess game), 404 (unknown game or
    path), 500 (a stored game that does not replay), 503 (database unavailable).
    """
    analysed = analysis_path_game(path)
    try:
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
            return 200, JSON_TYPE, _json_body(await show_game(store, game_id, ply))
        fmt = fmt.lower()
        if fmt not in CONTENT_TYPES:
            raise ReviewError(
                404, ErrorCode.NOT_FOUND, f"no export format {shown(fmt)} (use pgn, kif or usi)"
            )
        _only(query, set(), "export")
        text = await export_game(store, game_id, fmt)
        return 200, CONTENT_TYPES[fmt], text.encode()
    except ReviewError as error:
        return _error_response(error)


async def review_http_target(store: ReviewStore, target: str) -> tuple[int, str, bytes]:
    """:func:`review_http` for a raw request target such as ``/api/games?variant=spartan``
    (percent-decoded here; a name given twice is a 400)."""
    parts = urlsplit(target)
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        return _error_response(_bad("the query is not valid percent-encoded UTF-8"))
    query: dict[str, str] = {}
    for name, value in pairs:
        if name in query:
            return _error_response(_bad(f"field {shown(name)} is given more than once"))
        query[name] = value
    return await review_http(store, parts.path, query)


# ------------------------------------------------------------------------- websocket


def _only(payload: Mapping[str, object], allowed: set[str] | frozenset[str], kind: str) -> None:
    unknown = sorted(shown(name) for name in set(payload) - allowed)
    if unknown:
        raise _bad(f"{kind}: unknown field(s) {', '.join(unknown)}")


async def review_ws(
    store: ReviewStore, frame: Envelope | Mapping[str, object], player: str | None = None
) -> MessageJson:
    """Answer one websocket frame ``{"t": type, "d": payload, "a": ack}`` (or its checked
    envelope) whose type is in :data:`REVIEW_COMMAND_TYPES`; return the reply frame (wire form).

    * ``games`` (listing fields as in HTTP, JSON-typed) → ``{"t": "games", "d": page}``;
    * ``review`` ``{"game", "ply"?}`` → ``{"t": "review", "d": game}``;
    * ``export`` ``{"game", "format"}`` → ``{"t": "export", "d": {"game", "format",
      "content_type", "text"}}``;
    * ``analysis`` ``{"game"}`` → ``{"t": "analysis", "d": view}`` and ``analyse`` ``{"game",
      "movetime_ms"?, "depth"?}`` (a request, in the name of the logged-in ``player``) →
      ``{"t": "analyse", "d": view}`` (:mod:`server.transport.analysis_api`; further codes
      ``no_analysis``, ``analysis_exists``, ``game_not_finished``).

    Refusals are ``{"t": "error", "d": {"code", "message"}}`` with the codes ``bad_request``,
    ``not_found``, ``unsupported_format``, ``corrupt_record``, ``unavailable``. The ack id
    ``a`` is echoed in either case (when it is a valid one).
    """
    if not isinstance(frame, Envelope):
        try:
            frame = parse_envelope(frame)
        except ProtocolError as error:
            return error_message(error.code, str(error), ack_of(frame)).to_json_obj()
    kind, payload, ack = frame.kind, frame.payload, frame.ack
    data: GamesPayload | GameDetailView | ExportPayload | AnalysisView
    try:
        if kind == "games":
            data = await list_games(store, parse_list_query(payload))
        elif kind == "review":
            _only(payload, {"game", "ply"}, "review")
            if payload.get("game") is None:
                raise _bad("review: field 'game' is required")
            ply = (
                _integer("ply", payload["ply"], 0, 100_000)
                if payload.get("ply") is not None
                else None
            )
            data = await show_game(store, _text("game", payload["game"]), ply)
        elif kind == "export":
            _only(payload, {"game", "format"}, "export")
            if payload.get("game") is None or payload.get("format") is None:
                raise _bad("export: fields 'game' and 'format' are required")
            fmt = _choice("format", payload["format"], tuple(CONTENT_TYPES))
            game_id = _text("game", payload["game"])
            text = await export_game(store, game_id, fmt)
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
                raise _bad(f"{kind}: field 'game' is required")
            game_id = _game_id(_text("game", payload["game"]))
            try:
                if kind == "analysis":
                    data = await analysis_view(store, game_id)
                else:
                    data = await request_analysis(store, game_id, payload, player)
            except AnalysisRequestError as exc:
                raise ReviewError(exc.status, exc.code, exc.message) from exc
        else:
            raise _bad(f"unknown review command {shown(kind)}")
    except ReviewError as error:
        return error_message(error.code, error.message, ack).to_json_obj()
    return Message(kind, data, a=ack).to_json_obj()

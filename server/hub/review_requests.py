"""The review API's requests as typed values, and the one schema that reads their fields.

Stored games are listed, shown, exported and analysed over two doors (docs/protocol.md, "Review
and export"): the websocket frames ``games``, ``review``, ``export``, ``analysis`` and
``analyse`` (:func:`~server.hub.incoming.read_frame` reads them), and HTTP ``GET /api/games…``
and ``GET /api/game/{id}/analysis`` (``server.transport.review``). Both build their request
through :func:`review_request`, so a request is one of the typed values below whichever door it
came through, its fields checked by the same rules with the same messages:

* :class:`ListGamesRequest` (``games``): filters and a page, every field optional;
* :class:`ShowGameRequest` (``review``): a game, and ``ply`` for the position after it;
* :class:`ExportRequest` (``export``): a game and a format (``pgn``, ``kif``, ``usi``);
* :class:`GameAnalysisRequest` (``analysis``): a game's computer analysis;
* :class:`AnalyseRequest` (``analyse``): ask for one, with optional per-position limits.

A websocket frame carries every field in its payload (JSON values); an HTTP request names the
game (and the export format) in its path, which the door reads and hands over as ``given``:
such a field is taken as the path gave it and is not a query field. Query values are strings:
integers may be written as decimal digits on either door.

A refusal is a :class:`ReviewRequestError`, a :class:`~server.hub.errors.ProtocolError` whose
``code`` is ``bad_request``, or ``not_found`` for an analysis' game id that cannot name a game.
What the request asks (whether the game exists, the replay, the rate limits) is answered by the
review API from the store. Pure and sans-I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar, cast

from server.hub.errors import ErrorCode, ProtocolError
from server.hub.fields import MAX_NAME_LENGTH, MAX_PLY, shown, valid_text
from server.hub.game_ids import GAME_ID_PATTERN
from server.hub.messages import AckId
from server.hub.user_text import text_problem
from server.rules import VARIANT_NAMES
from server.rules.record import GAME_STATUSES, RESULT_CODES, GameStatus, ResultCode

__all__ = [
    "DEFAULT_LIMIT",
    "EXPORT_FORMATS",
    "MAX_DEPTH",
    "MAX_LIMIT",
    "MAX_MOVETIME_MS",
    "MAX_OFFSET",
    "MIN_MOVETIME_MS",
    "REVIEW_TYPES",
    "AnalyseRequest",
    "ExportRequest",
    "GameAnalysisRequest",
    "ListGamesRequest",
    "ReviewRequest",
    "ReviewRequestError",
    "ShowGameRequest",
    "limit_integer",
    "review_request",
]

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_OFFSET = 10_000
MAX_TEXT_LENGTH = 256
"""Longest text field (a cursor is about 60 characters)."""
EXPORT_FORMATS = ("pgn", "kif", "usi")
"""The export formats, in the order messages name them."""
MIN_MOVETIME_MS = 50
MAX_MOVETIME_MS = 10_000
MAX_DEPTH = 30
"""Bounds of an analysis' per-position limits (docs/engines.md)."""

_CURSOR = re.compile(r"[0-9A-Za-z_-]{1,256}")
_DIGITS = re.compile(r"\d{1,9}")


class ReviewRequestError(ProtocolError):
    """A review request whose fields do not follow the schema; ``code`` is ``bad_request``, or
    ``not_found`` for a game id that cannot name a game."""

    def __init__(self, message: str, code: ErrorCode = ErrorCode.BAD_REQUEST) -> None:
        super().__init__(message)
        self.code = code


# ---------------------------------------------------------------------------- the requests


@dataclass(frozen=True, slots=True)
class ReviewRequest:
    """Base of the review requests; ``kind`` is the request's (and its answer's) type, ``ack``
    the websocket frame's ack id."""

    kind: ClassVar[str]
    ack: AckId | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class ListGamesRequest(ReviewRequest):
    """``games``: a page of stored games, newest first, with the filters given."""

    kind: ClassVar[str] = "games"
    player: str | None = None
    variant: str | None = None
    result: ResultCode | None = None
    status: GameStatus | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class ShowGameRequest(ReviewRequest):
    """``review``: one stored game, with the position after ``ply`` moves when given."""

    kind: ClassVar[str] = "review"
    game_id: str
    ply: int | None = None


@dataclass(frozen=True, slots=True)
class ExportRequest(ReviewRequest):
    """``export``: one stored game as PGN, KIF or USI text."""

    kind: ClassVar[str] = "export"
    game_id: str
    format: str


@dataclass(frozen=True, slots=True)
class GameAnalysisRequest(ReviewRequest):
    """``analysis``: the computer analysis of a stored game."""

    kind: ClassVar[str] = "analysis"
    game_id: str


@dataclass(frozen=True, slots=True)
class AnalyseRequest(ReviewRequest):
    """``analyse``: ask for a computer analysis of a finished game, with the per-position move
    time and depth when given (the defaults are the analysis API's)."""

    kind: ClassVar[str] = "analyse"
    game_id: str
    movetime_ms: int | None = None
    depth: int | None = None


# -------------------------------------------------------------------------------- values


def _bad(message: str) -> ReviewRequestError:
    return ReviewRequestError(message)


def _text(name: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise _bad(f"{name} must be a non-empty string")
    if len(value) > MAX_TEXT_LENGTH or not valid_text(value):
        raise _bad(
            f"{name} must be valid Unicode text without NUL, at most {MAX_TEXT_LENGTH} characters"
        )
    problem = text_problem(value)  # a name, a variant, a date: never a control character
    if problem is not None:
        raise _bad(f"{name} {problem}")
    return value


def _integer(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, str):
        if not _DIGITS.fullmatch(value):
            raise _bad(f"{name} must be an integer between {low} and {high}, got {shown(value)}")
        number = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise _bad(f"{name} must be an integer between {low} and {high}")
    if not low <= number <= high:
        raise _bad(f"{name} must be an integer between {low} and {high}, got {number}")
    return number


def limit_integer(name: str, value: object, low: int, high: int) -> int:
    """An analysis limit: an integer (or its decimal digits) from ``low`` to ``high``.

    :raises ReviewRequestError: anything else (``bad_request``).
    """
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if type(value) is not int or not low <= value <= high:
        raise _bad(f"{name} must be an integer between {low} and {high}")
    return value


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


def _game_id(value: str) -> str:
    """A syntactically valid game id; anything else cannot name a stored game."""
    if not GAME_ID_PATTERN.fullmatch(value):
        raise ReviewRequestError(f"no game with id {shown(value)}", ErrorCode.NOT_FOUND)
    return value


# -------------------------------------------------------------------------------- schemas


@dataclass(frozen=True, slots=True)
class _Fields:
    """One request's fields as its schema reads them: ``where`` names it in messages."""

    where: str
    fields: Mapping[str, object]
    given: Mapping[str, str]
    ack: AckId | None

    def only(self, *allowed: str) -> None:
        unknown = sorted(shown(name) for name in set(self.fields) - set(allowed))
        if unknown:
            raise _bad(f"{self.where}: unknown field(s) {', '.join(unknown)}")

    def absent(self, name: str) -> bool:
        """Whether ``name`` is missing (``null`` is missing)."""
        return self.fields.get(name) is None


def _list_games(f: _Fields) -> ReviewRequest:
    fields = f.fields
    f.only("player", "variant", "result", "status", "since", "until", "limit", "offset", "cursor")
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
    return ListGamesRequest(
        player, variant, result, status, since, until, limit, offset, cursor, ack=f.ack
    )


def _show_game(f: _Fields) -> ReviewRequest:
    game = f.given.get("game")
    if game is None:
        f.only("game", "ply")
        if f.absent("game"):
            raise _bad(f"{f.where}: field 'game' is required")
    else:
        f.only("ply")
    ply = None if f.absent("ply") else _integer("ply", f.fields["ply"], 0, MAX_PLY)
    if game is None:
        game = _text("game", f.fields["game"])
    return ShowGameRequest(game, ply, ack=f.ack)


def _export(f: _Fields) -> ReviewRequest:
    game, fmt = f.given.get("game"), f.given.get("format")
    if game is not None and fmt is not None:
        f.only()
        return ExportRequest(game, fmt, ack=f.ack)
    f.only("game", "format")
    if f.absent("game") or f.absent("format"):
        raise _bad(f"{f.where}: fields 'game' and 'format' are required")
    fmt = _choice("format", f.fields["format"], EXPORT_FORMATS)
    return ExportRequest(_text("game", f.fields["game"]), fmt, ack=f.ack)


def _analysed_game(f: _Fields, *others: str) -> str:
    """The game of ``analysis``/``analyse`` (the path's, or the ``game`` field's)."""
    game = f.given.get("game")
    if game is not None:
        f.only(*others)
        return game
    f.only("game", *others)
    if f.absent("game"):
        raise _bad(f"{f.where}: field 'game' is required")
    return _game_id(_text("game", f.fields["game"]))


def _game_analysis(f: _Fields) -> ReviewRequest:
    return GameAnalysisRequest(_analysed_game(f), ack=f.ack)


def _analyse(f: _Fields) -> ReviewRequest:
    game = _analysed_game(f, "movetime_ms", "depth")
    movetime = depth = None
    if not f.absent("movetime_ms"):
        movetime = limit_integer(
            "movetime_ms", f.fields["movetime_ms"], MIN_MOVETIME_MS, MAX_MOVETIME_MS
        )
    if not f.absent("depth"):
        depth = limit_integer("depth", f.fields["depth"], 1, MAX_DEPTH)
    return AnalyseRequest(game, movetime, depth, ack=f.ack)


_SCHEMAS: dict[str, Callable[[_Fields], ReviewRequest]] = {
    "games": _list_games,
    "review": _show_game,
    "export": _export,
    "analysis": _game_analysis,
    "analyse": _analyse,
}

REVIEW_TYPES: frozenset[str] = frozenset(_SCHEMAS)
"""The review request types (answered from the store, not by the hub)."""

_NO_GIVEN: Mapping[str, str] = {}


def review_request(
    kind: str,
    fields: Mapping[str, object],
    ack: AckId | None = None,
    *,
    given: Mapping[str, str] = _NO_GIVEN,
    where: str | None = None,
) -> ReviewRequest:
    """The typed review request ``kind`` (one of :data:`REVIEW_TYPES`) of ``fields`` — a
    websocket frame's payload or an HTTP query — read with its schema.

    ``given`` holds what an HTTP door read from its path (``game``, an export's ``format``):
    taken as it is, and not a field of ``fields``; ``where`` names the request in messages
    (default ``kind``).

    >>> review_request("review", {"game": "Xq3fT0aa", "ply": "4"}, 7)
    ShowGameRequest(ack=7, game_id='Xq3fT0aa', ply=4)
    >>> review_request("games", {"limit": "500"})
    Traceback (most recent call last):
    ...
    server.hub.review_requests.ReviewRequestError: limit must be an integer between 1 and 100, got 500

    :raises ReviewRequestError: an unknown or missing field, a value out of its range, a game id
        that cannot name a game (``not_found``).
    """
    return _SCHEMAS[kind](_Fields(where or kind, fields, given, ack))

"""The review API's views of stored games: the JSON of a listed game (:func:`game_summary`)
and of a shown one (:func:`game_detail`), and the export texts (:func:`export_text`), with
:class:`ReviewError`, the refusal they and the requests (:mod:`server.transport.review`) raise.

Synchronous and free of I/O: :func:`replayed` replays the stored moves through the
adjudicator, which for a long Dai Shogi game takes a noticeable fraction of a second, so the
requests call it in a worker thread, behind the gate of :mod:`server.transport.review_reads`,
and give its result to :func:`game_detail` and :func:`export_text`.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from datetime import UTC, datetime
from typing import cast

from server.hub.errors import ErrorCode
from server.hub.payloads import SideName
from server.hub.review_payloads import (
    GameDetailView,
    GameSummaryView,
    StoredMoveView,
    StoredPlayerView,
    StoredPositionView,
    StoredTimeControlView,
)
from server.rules import SIDE_NAMES, Game, RulesError, Variant, get_variant
from server.rules.analysis import PlyEval
from server.rules.export import (
    format_time_control,
    pgn_tags,
    write_kif,
    write_pgn,
    write_usi,
)
from server.rules.record import GameInfo, GameRecord, MoveRecord
from server.rules.time_control import Byoyomi, Correspondence, Fischer, TimeControl

__all__ = [
    "ReviewError",
    "bad_request",
    "export_text",
    "game_detail",
    "game_summary",
    "replay_steps",
    "replayed",
    "stored_time_control_view",
]


# ---------------------------------------------------------------------------- errors


class ReviewError(Exception):
    """A refused review request: HTTP ``status`` and a stable ``code`` for the websocket."""

    def __init__(self, status: int, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def bad_request(message: str) -> ReviewError:
    """The client's mistake: HTTP 400, ``bad_request``."""
    return ReviewError(400, ErrorCode.BAD_REQUEST, message)


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
    period as ``byoyomi_ms``, the other kinds' fields 0; correspondence: the days per move as
    ``base_ms`` and ``days``; unlimited: all 0) and the PGN text."""
    base_ms = increment_ms = byoyomi_ms = periods = 0
    if isinstance(control, Fischer):
        base_ms, increment_ms = control.base_ms, control.increment_ms
    elif isinstance(control, Byoyomi):
        base_ms, byoyomi_ms, periods = control.base_ms, control.period_ms, control.periods
    elif isinstance(control, Correspondence):
        base_ms = control.per_move_ms
    view: StoredTimeControlView = {
        "kind": control.kind,
        "base_ms": base_ms,
        "increment_ms": increment_ms,
        "byoyomi_ms": byoyomi_ms,
        "periods": periods,
        "text": format_time_control(control),
    }
    if isinstance(control, Correspondence):
        view["days"] = control.days_per_move
    return view


def game_summary(info: GameInfo) -> GameSummaryView:
    """The JSON form of a listed game (no moves)."""
    view = _summary(info)
    if info.tournament_id is not None and info.tournament_round is not None:
        berserked: list[SideName] = []
        if info.first_berserk:
            berserked.append("first")
        if info.second_berserk:
            berserked.append("second")
        view["tournament"] = {
            "id": info.tournament_id,
            "round": info.tournament_round,
            "berserk": berserked,
        }
    return view


def _summary(info: GameInfo) -> GameSummaryView:
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


def replay_steps(record: GameRecord) -> Generator[None, None, Game]:
    """The stored moves replayed one at a time: the generator yields after each move and
    returns the game (CPU-heavy for a long game: :func:`~server.transport.review_reads.run_sliced`
    runs it on the event loop a slice at a time, :func:`replayed` at once).

    :raises ReviewError: 500 ``corrupt_record``, the moves do not replay.
    """
    variant = _variant(record)
    try:
        game = Game(variant, record.start_fen)
        for ply, move in enumerate(record.moves, 1):
            try:
                game.play(move.uci)
            except RulesError as exc:  # the message of server.rules.export.replay
                raise type(exc)(f"move {ply} ({move.uci}): {exc}") from exc
            yield
    except RulesError as exc:
        raise ReviewError(
            500,
            ErrorCode.CORRUPT_RECORD,
            f"game {record.id}: the stored moves do not replay: {exc}",
        ) from exc
    return game


def replayed(record: GameRecord) -> Game:
    """:func:`replay_steps` at once.

    :raises ReviewError: 500 ``corrupt_record``, the moves do not replay.
    """
    steps = replay_steps(record)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return cast(Game, done.value)


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


def game_detail(record: GameRecord, ply: int | None, game: Game | None = None) -> GameDetailView:
    """The JSON form of one game; from ``game``, its replay, when given (a millisecond for a
    long game), else replaying it (in a worker thread then)."""
    game = replayed(record) if game is None else game
    if ply is not None and ply > game.ply:
        raise bad_request(f"ply must be between 0 and {game.ply} for this game, got {ply}")
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


# ------------------------------------------------------------------------- export texts


def export_text(
    record: GameRecord, fmt: str, analysis: Sequence[PlyEval] = (), game: Game | None = None
) -> str:
    """The export text, with a finished analysis's comments; from ``game``, the record's replay,
    when given, else replaying it (in a worker thread then)."""
    variant = _variant(record)
    if fmt not in _formats(variant):
        raise ReviewError(
            400,
            ErrorCode.UNSUPPORTED_FORMAT,
            f"{fmt.upper()} export is for shogi variants; {variant.title} games export as PGN",
        )
    game = replayed(record) if game is None else game
    if fmt == "pgn":
        return write_pgn(record, game, analysis=analysis)
    if fmt == "kif":
        return write_kif(record, game, analysis=analysis)
    return write_usi(record, game)

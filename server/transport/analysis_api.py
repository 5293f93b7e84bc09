"""Computer analysis of stored games, for every door: request one, read its progress and results.

One place checks a request and builds the JSON view; the doors only carry them:

* HTTP ``GET /api/game/{id}/analysis`` (the review API's HTTP answerer,
  :mod:`server.transport.review`) and ``POST /api/game/{id}/analysis`` (the HTTP API);
* the websocket review commands ``analysis`` ``{"game"}`` and ``analyse`` ``{"game",
  "movetime_ms"?, "depth"?}``.

A request is for a **finished** game; its limits are per analysed position: a move time
(``movetime_ms``, 50 ms – 10 s) or a depth (1–30), or both (the search stops at the first
reached); without either the variant's default move time applies (:data:`DEFAULT_MOVETIME_MS`).
Dai Shogi is slow (HaChu at ~1 s a position gives little depth; a 150-ply game takes minutes):
the view gives an estimate and the progress ``done`` of ``total`` positions as the worker
submits them. Results are lichess's: per position the score from the first player's view,
best move and line, depth; per move the judgement (inaccuracy / mistake / blunder); per side
the counts, average centipawn loss and accuracy (:mod:`server.rules.analysis`).

The store is any object with the :class:`AnalysisStore` methods (``server.store.Store``, handed
over by ``server.app``: adapters do not import each other). Its ``request_analysis`` stores the
request and queues the engine job in one transaction (the job queue is in the same database).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol

from server.hub.errors import ErrorCode
from server.hub.game_ids import GAME_ID_PATTERN
from server.hub.payloads import AnalysisView, ShownAdviceView, ShownPlyEvalView
from server.rules import Game, RulesError, get_variant
from server.rules.analysis import (
    AnalysisLimits,
    AnalysisRecord,
    MoveAdvice,
    PlyEval,
    advices,
    summarize,
)
from server.rules.export import replay
from server.rules.notation import display_line
from server.rules.record import GameRecord

__all__ = [
    "ANALYSIS_PATH",
    "DEFAULT_MOVETIME_MS",
    "MAX_DEPTH",
    "MAX_MOVETIME_MS",
    "MIN_MOVETIME_MS",
    "AnalysisRequestError",
    "AnalysisStore",
    "analysis_path_game",
    "analysis_view",
    "parse_limits",
    "positions_to_analyse",
    "request_analysis",
]

#: Per-position move time when the request names no limit, by variant (measured: docs/engines.md).
DEFAULT_MOVETIME_MS: dict[str, int] = {
    "minishogi": 300,
    "shoshogi": 500,
    "wildcastle": 300,
    "spartan": 300,
    "daishogi": 1000,
}
MIN_MOVETIME_MS = 50
MAX_MOVETIME_MS = 10_000
MAX_DEPTH = 30
#: The worker's own setup and round trips per position, for the estimate.
OVERHEAD_MS = 50

ANALYSIS_PATH = re.compile(rf"/api/game/({GAME_ID_PATTERN.pattern})/analysis/?")
_REQUEST_FIELDS = frozenset({"movetime_ms", "depth", "game"})


class AnalysisRequestError(Exception):
    """A refused request: HTTP ``status``, a stable ``code`` and a message."""

    def __init__(self, status: int, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class AnalysisStore(Protocol):
    async def get_game(self, game_id: str) -> GameRecord | None: ...

    async def get_analysis(self, game_id: str) -> AnalysisRecord | None: ...

    async def request_analysis(
        self,
        game_id: str,
        *,
        limits: AnalysisLimits,
        plies_total: int,
        requested_by: str | None = None,
    ) -> AnalysisRecord: ...


def _bad(message: str) -> AnalysisRequestError:
    return AnalysisRequestError(400, ErrorCode.BAD_REQUEST, message)


def analysis_path_game(path: str) -> str | None:
    """The game id of ``/api/game/{id}/analysis``, or None for another path."""
    match = ANALYSIS_PATH.fullmatch(path)
    return match.group(1) if match else None


def _bounded(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, str) and re.fullmatch(r"\d{1,9}", value):
        value = int(value)
    if type(value) is not int or not low <= value <= high:
        raise _bad(f"{name} must be an integer between {low} and {high}")
    return value


def parse_limits(variant: str, fields: Mapping[str, object]) -> AnalysisLimits:
    """The per-position limits of a request (JSON body, form or query fields)."""
    unknown = sorted(set(fields) - _REQUEST_FIELDS)
    if unknown:
        raise _bad(f"unknown field(s) {', '.join(repr(name)[:40] for name in unknown)}")
    movetime = depth = None
    if fields.get("movetime_ms") is not None:
        movetime = _bounded("movetime_ms", fields["movetime_ms"], MIN_MOVETIME_MS, MAX_MOVETIME_MS)
    if fields.get("depth") is not None:
        depth = _bounded("depth", fields["depth"], 1, MAX_DEPTH)
    if movetime is None and depth is None:
        movetime = DEFAULT_MOVETIME_MS.get(variant, 500)
    return AnalysisLimits(movetime, depth)


def positions_to_analyse(game: Game) -> int:
    """The positions a worker evaluates: the start and the position after every move, except
    a final position that ended the game by the rules (it has no move to find)."""
    return game.ply + 1 - (1 if game.outcome() is not None else 0)


def _replay(record: GameRecord) -> Game:
    try:
        return replay(get_variant(record.variant), record.start_fen, (m.uci for m in record.moves))
    except (KeyError, RulesError) as exc:
        raise AnalysisRequestError(
            500, ErrorCode.CORRUPT_RECORD, f"game {record.id}: the stored moves do not replay"
        ) from exc


async def _call(call: Awaitable[Any]) -> Any:
    try:
        return await call
    except AnalysisRequestError:
        raise
    except ValueError as exc:
        raise _bad(str(exc)) from exc
    except Exception as exc:
        # The store's narrow errors, by name (the transport does not import the store); the
        # checks before the write make these the losers of a race only.
        name = type(exc).__name__
        if name == "UnknownGameError":
            raise AnalysisRequestError(404, ErrorCode.NOT_FOUND, str(exc)) from exc
        if name == "GameStateError":
            raise AnalysisRequestError(
                409, ErrorCode.GAME_NOT_FINISHED, "only finished games can be analysed"
            ) from exc
        if name == "AnalysisExistsError":
            raise AnalysisRequestError(409, ErrorCode.ANALYSIS_EXISTS, str(exc)) from exc
        raise AnalysisRequestError(
            503, ErrorCode.UNAVAILABLE, "game storage is unavailable, try again later"
        ) from exc


async def _record(store: AnalysisStore, game_id: str) -> GameRecord:
    record = await _call(store.get_game(game_id))
    if record is None:
        raise AnalysisRequestError(404, ErrorCode.NOT_FOUND, f"no game with id {game_id!r}")
    return record


async def request_analysis(
    store: AnalysisStore,
    game_id: str,
    fields: Mapping[str, object],
    requested_by: str | None = None,
) -> AnalysisView:
    """Request a computer analysis of a finished game; returns its view (state ``queued``).

    Refusals (nothing is stored): 400 bad limits / unknown field, 404 no such game, 409 the
    game is not finished or already has an analysis (queued, running or done; a failed one
    may be requested again), 503 storage or the job queue unavailable.
    """
    record = await _record(store, game_id)
    limits = parse_limits(record.variant, fields)
    if record.status != "finished":
        raise AnalysisRequestError(
            409, ErrorCode.GAME_NOT_FINISHED, "only finished games can be analysed"
        )
    existing = await _call(store.get_analysis(game_id))
    if existing is not None and existing.state != "failed":
        raise AnalysisRequestError(
            409,
            ErrorCode.ANALYSIS_EXISTS,
            f"game {game_id} already has an analysis ({existing.state})",
        )
    game = await asyncio.to_thread(_replay, record)
    total = positions_to_analyse(game)
    analysis = await _call(
        store.request_analysis(game_id, limits=limits, plies_total=total, requested_by=requested_by)
    )
    return view_of(analysis, game)


async def analysis_view(store: AnalysisStore, game_id: str) -> AnalysisView:
    """The analysis of a game as JSON; 404 ``no_analysis`` when none was requested."""
    analysis = await _call(store.get_analysis(game_id))
    if analysis is None:
        await _record(store, game_id)  # an unknown game is a 404 not_found
        raise AnalysisRequestError(404, ErrorCode.NO_ANALYSIS, f"game {game_id} has no analysis")
    record = await _record(store, game_id)
    game = await asyncio.to_thread(_replay, record)
    return await asyncio.to_thread(view_of, analysis, game)


def _estimate_s(analysis: AnalysisRecord) -> int:
    per = (analysis.limits.movetime_ms or 1000) + OVERHEAD_MS
    return -(-(analysis.plies_total - analysis.plies_done) * per // 1000)


def view_of(analysis: AnalysisRecord, game: Game) -> AnalysisView:
    """The JSON view: state, progress, per-position evaluations, judged moves, per-side summary.

    ``game`` is the analysed game: its moves tell the engine's own best moves (never judged,
    :func:`server.rules.analysis.played_best`) and its positions turn the engine's moves into
    the variant's notation (``best_display``, ``pv_display``), so every door shows the
    same text as the move list."""
    first_mover = game.start_turn
    first, second = summarize(analysis.evals, first_mover, game.moves)
    view: AnalysisView = {
        "game": analysis.game_id,
        "state": analysis.state,
        "requested_by": analysis.requested_by,
        "limits": analysis.limits.as_json(),
        "progress": {"done": analysis.plies_done, "total": analysis.plies_total},
        "estimate_s": 0 if analysis.state in ("done", "failed") else _estimate_s(analysis),
        "plies": [_shown_eval(entry, game) for entry in analysis.evals],
        "advice": [
            _shown_advice(a, game) for a in advices(analysis.evals, first_mover, game.moves)
        ],
        "summary": {"first": first.as_json(), "second": second.as_json()},
    }
    if analysis.error is not None:
        view["error"] = analysis.error
    return view


def _shown_eval(entry: PlyEval, game: Game) -> ShownPlyEvalView:
    """An evaluation with its line in the variant's notation (from the position it is of)."""
    line = display_line(game.position_at(entry.ply), entry.pv) if entry.ply <= game.ply else []
    best = None
    if entry.best is not None:
        best = (
            line[0]
            if entry.pv[:1] == (entry.best,) and line
            else _shown(game, entry.ply, entry.best)
        )
    return {**entry.as_json(), "best_display": best, "pv_display": line}


def _shown_advice(advice: MoveAdvice, game: Game) -> ShownAdviceView:
    """A judged move with the best move in the variant's notation (in the position before it)."""
    best = None if advice.best is None else _shown(game, advice.ply - 1, advice.best)
    return {**advice.as_json(), "best_display": best}


def _shown(game: Game, ply: int, move: str) -> str | None:
    """One move text of the position after ``ply`` moves in the variant's notation."""
    shown = display_line(game.position_at(ply), (move,), 1) if ply <= game.ply else []
    return shown[0] if shown else None

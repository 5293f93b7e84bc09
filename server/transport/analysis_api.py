"""Computer analysis of stored games, for every door: request one, read its progress and results.

One place checks a request and builds the JSON view; the doors only carry them:

* HTTP ``GET /api/game/{id}/analysis`` (the review API's HTTP answerer,
  :mod:`server.transport.review`) and ``POST /api/game/{id}/analysis`` (the HTTP API);
* the websocket review commands ``analysis`` ``{"game"}`` and ``analyse`` ``{"game",
  "movetime_ms"?, "depth"?}``.

**Who may request** (the same checks for every door, here): a logged-in **registered** player
(:class:`Requester`; anonymous: 401 ``not_authenticated``, a guest: 403 ``registered_only``),
within a rate of requests (429 ``rate_limited``; token buckets per player, checked before
anything is read), with no other analysis of theirs unfinished (429 ``analysis_running``) and fewer than the daily
quota of requests in the last 24 hours (429 ``analysis_quota``; counted in the store, so a
restart does not reset it), for at most ``max_engine_s`` of engine time (positions × move
time: an explicit move time over it is 400 ``analysis_too_long`` naming the longest that fits;
the default move time is lowered to fit, and a depth-only request gets that move time as a
cap). A player of the game may always request: an analysis somebody else requested, in any
state, is replaced (the players decide about their own game). The limits come from the
store's ``analysis_policy`` (:class:`AnalysisPolicy`; the app's desk carries the settings'
one, a bare store the defaults). Reading an analysis is open to anyone.

A request is for a **finished** game; its limits are per analysed position: a move time
(``movetime_ms``, 50 ms – 10 s) or a depth (1–30), or both (the search stops at the first
reached); without either the variant's default move time applies (:data:`DEFAULT_MOVETIME_MS`).
Dai Shogi is slow (HaChu at ~1 s a position gives little depth; a 150-ply game takes minutes):
the view gives an estimate and the progress ``done`` of ``total`` positions as the worker
submits them. Results are lichess's: per position the score from the first player's view,
best move and line, depth; per move the judgement (inaccuracy / mistake / blunder); per side
the counts, average centipawn loss and accuracy (:mod:`server.rules.analysis`).

The backend is any object with the :class:`AnalysisBackend` methods (the app's analysis desk
over ``server.store.Store``, handed over by ``server.app``: adapters do not import each other). Its ``request_analysis`` stores the
request and queues the engine job in one transaction (the job queue is in the same database).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from server.hub.errors import ErrorCode
from server.hub.game_ids import GAME_ID_PATTERN
from server.hub.review_payloads import AnalysisView, ShownAdviceView, ShownPlyEvalView
from server.hub.review_requests import (
    MAX_DEPTH,
    MAX_MOVETIME_MS,
    MIN_MOVETIME_MS,
    ReviewRequestError,
    limit_integer,
)
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
from server.transport.ratelimit import KeyedBuckets, Verdict

__all__ = [
    "ANALYSIS_PATH",
    "DEFAULT_MOVETIME_MS",
    "MAX_DEPTH",
    "MAX_MOVETIME_MS",
    "MIN_MOVETIME_MS",
    "AnalysisBackend",
    "AnalysisPolicy",
    "AnalysisRequestError",
    "AnalysisUsageView",
    "Requester",
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


@dataclass(frozen=True, slots=True)
class Requester:
    """Who asks for an analysis, as the door knows them: the hub's player id, the name, and
    whether they are a guest."""

    id: str
    name: str
    guest: bool


@dataclass(slots=True)
class AnalysisPolicy:
    """The limits of requests (``[analysis]`` in the settings; docs/engines.md), with the
    per-player token buckets of the request rate (this process's: every request, accepted or
    refused, takes a token before anything is read)."""

    daily_quota: int = 20
    """Requests a player may make in 24 hours."""
    max_engine_s: float = 600.0
    """Engine time one analysis may ask for: positions × move time, in seconds."""
    requests_per_min: float = 6.0
    """Sustained requests a minute per player (refused ones count)."""
    request_burst: int = 10
    """Requests a player may make at once above that rate."""
    buckets: KeyedBuckets = field(init=False)

    def __post_init__(self) -> None:
        self.buckets = KeyedBuckets(self.requests_per_min / 60, self.request_burst)

    def admit(self, requester: Requester, now: float | None = None) -> None:
        """Take a token of ``requester``'s bucket (at ``now``, a monotonic time), or refuse:
        429 ``rate_limited``."""
        moment = time.monotonic() if now is None else now
        if self.buckets.take(requester.name.lower(), moment) is not Verdict.ACCEPT:
            raise AnalysisRequestError(
                429,
                ErrorCode.RATE_LIMITED,
                f"too many analysis requests: at most {self.requests_per_min:g} a minute "
                f"(and {self.request_burst} at once); try again shortly",
            )


class AnalysisUsageView(Protocol):
    """A player's requests of the last day and their unfinished analyses' games."""

    @property
    def requested(self) -> int: ...

    @property
    def unfinished(self) -> tuple[str, ...]: ...


class AnalysisBackend(Protocol):
    """What the doors' analysis requests and reads need: the store's game and analysis reads
    and a request that stores and queues (``server.app.analysis.AnalysisDesk``)."""

    async def get_game(self, game_id: str) -> GameRecord | None: ...

    async def get_analysis(self, game_id: str) -> AnalysisRecord | None: ...

    async def analysis_usage(self, requested_by: str, since: datetime) -> AnalysisUsageView: ...

    async def request_analysis(
        self,
        game_id: str,
        *,
        limits: AnalysisLimits,
        plies_total: int,
        requested_by: str | None = None,
        players: Collection[str] = (),
    ) -> AnalysisRecord: ...


DEFAULT_POLICY = AnalysisPolicy(requests_per_min=6000.0, request_burst=1000)
"""A bare store's (the tests'): the settings' quota and bound, no rate to speak of."""


def policy_of(store: AnalysisBackend) -> AnalysisPolicy:
    """The store's ``analysis_policy`` (the app's desk: the settings'), else
    :data:`DEFAULT_POLICY`."""
    policy = getattr(store, "analysis_policy", None)
    return policy if isinstance(policy, AnalysisPolicy) else DEFAULT_POLICY


def _bad(message: str) -> AnalysisRequestError:
    return AnalysisRequestError(400, ErrorCode.BAD_REQUEST, message)


def analysis_path_game(path: str) -> str | None:
    """The game id of ``/api/game/{id}/analysis``, or None for another path."""
    match = ANALYSIS_PATH.fullmatch(path)
    return match.group(1) if match else None


def parse_limits(variant: str, fields: Mapping[str, object]) -> AnalysisLimits:
    """The per-position limits of a request (JSON body, form or query fields), each read as
    the websocket's ``analyse`` reads it (:func:`~server.hub.review_requests.limit_integer`)."""
    unknown = sorted(set(fields) - _REQUEST_FIELDS)
    if unknown:
        raise _bad(f"unknown field(s) {', '.join(repr(name)[:40] for name in unknown)}")
    movetime = depth = None
    try:
        if fields.get("movetime_ms") is not None:
            movetime = limit_integer(
                "movetime_ms", fields["movetime_ms"], MIN_MOVETIME_MS, MAX_MOVETIME_MS
            )
        if fields.get("depth") is not None:
            depth = limit_integer("depth", fields["depth"], 1, MAX_DEPTH)
    except ReviewRequestError as error:
        raise _bad(str(error)) from None
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


async def _record(store: AnalysisBackend, game_id: str) -> GameRecord:
    record = await _call(store.get_game(game_id))
    if record is None:
        raise AnalysisRequestError(404, ErrorCode.NOT_FOUND, f"no game with id {game_id!r}")
    return record


def check_requester(requester: Requester | None) -> Requester:
    """A registered player, or the refusal (401 anonymous, 403 a guest)."""
    if requester is None:
        raise AnalysisRequestError(
            401,
            ErrorCode.NOT_AUTHENTICATED,
            "log in with a registered account to request a computer analysis",
        )
    if requester.guest:
        raise AnalysisRequestError(
            403,
            ErrorCode.REGISTERED_ONLY,
            "guests cannot request computer analyses; log in with a registered account",
        )
    return requester


def bounded_limits(
    limits: AnalysisLimits, fields: Mapping[str, object], positions: int, max_engine_s: float
) -> AnalysisLimits:
    """``limits`` within ``max_engine_s`` of engine time for ``positions`` positions: a move
    time the request named must fit (else 400 ``analysis_too_long``, naming the longest that
    does); the default move time is lowered to fit; a depth alone gets the fitting move time as
    a cap (the search stops at the first reached)."""
    fit = min(MAX_MOVETIME_MS, int(max_engine_s * 1000) // max(1, positions))
    named = fields.get("movetime_ms") is not None
    movetime = limits.movetime_ms
    if fit < MIN_MOVETIME_MS:
        raise AnalysisRequestError(
            400,
            ErrorCode.ANALYSIS_TOO_LONG,
            f"this game has {positions} positions: at {MIN_MOVETIME_MS} ms each (the least) that "
            f"is more than the {max_engine_s:g} s of engine time an analysis may take",
        )
    if named and movetime is not None and movetime > fit:
        raise AnalysisRequestError(
            400,
            ErrorCode.ANALYSIS_TOO_LONG,
            f"{positions} positions at {movetime} ms is {positions * movetime / 1000:g} s of "
            f"engine time; an analysis may take at most {max_engine_s:g} s: ask for at most "
            f"{fit} ms a position",
        )
    return AnalysisLimits(fit if movetime is None else min(movetime, fit), limits.depth)


async def _check_usage(
    store: AnalysisBackend, requester: Requester, policy: AnalysisPolicy, game_id: str
) -> None:
    """The requester's unfinished analysis (another game's: their own of this game is the
    existing analysis' 409) and daily quota; before the game is read and replayed, so that a
    flood of refused requests costs a query each."""
    since = datetime.now(UTC) - timedelta(days=1)
    usage = await _call(store.analysis_usage(requester.name, since))
    others = [game for game in usage.unfinished if game != game_id]
    if others:
        raise AnalysisRequestError(
            429,
            ErrorCode.ANALYSIS_RUNNING,
            f"your analysis of game {others[0]} is not finished yet: one at a time",
        )
    if usage.requested >= policy.daily_quota:
        raise AnalysisRequestError(
            429,
            ErrorCode.ANALYSIS_QUOTA,
            f"you have requested {usage.requested} analyses in the last 24 hours, the most a "
            f"day allows ({policy.daily_quota}); try again later",
        )


async def request_analysis(
    store: AnalysisBackend,
    game_id: str,
    fields: Mapping[str, object],
    requester: Requester | None = None,
) -> AnalysisView:
    """Request a computer analysis of a finished game for ``requester``; returns its view
    (state ``queued``).

    Refusals (nothing is stored): 401 / 403 not a registered player, 400 bad limits / unknown
    field / too long (``analysis_too_long``), 404 no such game, 409 the game is not finished or
    already has an analysis (queued, running or done, requested by a player of the game or by
    anyone when the requester is not a player; a failed one may be requested again), 429 the
    requester's previous analysis is unfinished or their daily quota is used, 503 storage or
    the job queue unavailable.
    """
    parse_limits("", fields)  # a malformed request is a 400 whoever sends it
    who = check_requester(requester)
    policy = policy_of(store)
    policy.admit(who)
    await _check_usage(store, who, policy, game_id)
    record = await _record(store, game_id)
    limits = parse_limits(record.variant, fields)
    if record.status != "finished":
        raise AnalysisRequestError(
            409, ErrorCode.GAME_NOT_FINISHED, "only finished games can be analysed"
        )
    players = (record.first_name, record.second_name)
    player = who.name.lower() in {name.lower() for name in players}
    existing = await _call(store.get_analysis(game_id))
    if existing is not None and existing.state != "failed":
        by_player = (existing.requested_by or "").lower() in {name.lower() for name in players}
        if not player or by_player:
            raise AnalysisRequestError(
                409,
                ErrorCode.ANALYSIS_EXISTS,
                f"game {game_id} already has an analysis ({existing.state})",
            )
    # The replay (a thread; long games cost tens of milliseconds) only for a request that
    # passed every cheaper check.
    game = await asyncio.to_thread(_replay, record)
    total = positions_to_analyse(game)
    limits = bounded_limits(limits, fields, total, policy.max_engine_s)
    analysis = await _call(
        store.request_analysis(
            game_id,
            limits=limits,
            plies_total=total,
            requested_by=who.name,
            players=players if player else (),
        )
    )
    return view_of(analysis, game)


async def analysis_view(store: AnalysisBackend, game_id: str) -> AnalysisView:
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

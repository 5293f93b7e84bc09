"""The computer player and analyst: engines kept running, restarted when they fail, and every
move they propose checked by our adjudicator before anyone sees it.

:class:`Computer` owns one process per engine program (started on first use); a crashed or
hung engine (:class:`~.process.EngineError`) is killed and the search asked again of a fresh
process with a short time. A move the engine proposes that our rules refuse, or no move at
all, is replaced by a fallback (:func:`fallback_move`), logged and counted per variant
(:attr:`Computer.fallbacks`).
"""

from __future__ import annotations

import collections
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from server.jsontypes import JsonObject
from server.rules import Game, Position, get_variant
from server.rules.analysis import PlyEvalView, ScoreView

from .cecp import CecpEngine
from .dialects import Dialect, EngineProgram, dialect_for, translate_line, variants_ini
from .levels import DEADLINE_MARGIN_MS, level_blunder, search_deadline_ms, think_limits
from .process import EngineError, EngineRefused
from .search import EngineClock, EnginePosition, SearchLimits, SearchResult
from .uci import UciEngine

__all__ = ["AnalysisEntry", "Computer", "MoveAnswer", "clock_for", "fallback_move", "game_of"]

log = logging.getLogger(__name__)
DEPTH_ONLY_MS = 40_000
"""A ply analysed to a depth alone is cut here (the analysis lease is 60 s)."""
RETRY_MS = 200
"""The move time of the second try, after an engine failed."""

Driver = CecpEngine | UciEngine


def game_of(variant: str, position: str | None, moves: str | list[str]) -> Game:
    """The game a job describes (raises RulesError / KeyError on a bad one)."""
    game = Game(get_variant(variant), position or None)
    for text in moves.split() if isinstance(moves, str) else moves:
        game.play(text)
    return game


def clock_for(
    job_clock: JsonObject | None, engine_is_first: bool, spent_ms: int = 0
) -> EngineClock | None:
    """The job's clock (FISHNET.md) from the engine's side, less what the worker has spent."""
    if not job_clock:
        return None
    first, second = int(job_clock.get("first_ms", 0)), int(job_clock.get("second_ms", 0))
    own, other = (first, second) if engine_is_first else (second, first)
    byoyomi = int(job_clock.get("byoyomi_ms", 0)) if job_clock.get("kind") == "byoyomi" else 0
    return EngineClock(
        own_ms=max(0, own - spent_ms),
        other_ms=other,
        increment_ms=int(job_clock.get("increment_ms", 0)),
        byoyomi_ms=byoyomi,
        engine_is_first=engine_is_first,
    )


def fallback_move(pos: Position, legal: list[str]) -> str:
    """A legal move when the engine gave none we accept, by a one-ply look of our own: a mate,
    else a capture (a promoting one first), else a check, else a promotion, else the first
    legal move (sorted: deterministic, so a test can name it)."""
    by_text = pos.legal_by_text()
    best, best_rank = legal[0], -1
    for text in legal:
        move = by_text.get(text)
        if move is None:  # the pass (@@@@): never better than a real move
            continue
        after = pos.play(move)
        check = after.is_check()
        if check and not after.has_legal_move():
            return text
        rank = 4 * pos.is_capture(move) + 2 * check + bool(move.promotion)
        if rank > best_rank:
            best, best_rank = text, rank
    return best


@dataclass(slots=True)
class MoveAnswer:
    move: str | None  # our legal move text; None only when the game is over
    engine_move: str | None  # what the engine said
    fallback: str | None = None  # why the engine's move was not used
    result: SearchResult | None = None


@dataclass(slots=True)
class AnalysisEntry:
    ply: int
    score: ScoreView
    best: str | None
    pv: list[str]
    depth: int
    nodes: int | None
    time_ms: int

    def as_json(self) -> PlyEvalView:
        return {
            "ply": self.ply,
            "score": self.score,
            "best": self.best,
            "pv": " ".join(self.pv),
            "depth": self.depth,
            "nodes": self.nodes,
            "time_ms": self.time_ms,
        }


@dataclass
class Computer:
    """Engines for one search at a time (a worker runs one Computer per core)."""

    nice: int = 0
    engines: dict[str, str] = field(default_factory=dict)  # variant -> engine override
    programs: dict[str, EngineProgram] = field(
        default_factory=dict
    )  # engine key -> program override
    fallbacks: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    restarts: collections.Counter[str] = field(default_factory=collections.Counter)
    rng: random.Random = field(default_factory=random.Random)
    _drivers: dict[str, Driver] = field(default_factory=dict)

    def dialect(self, variant: str) -> Dialect:
        return dialect_for(variant, self.engines.get(variant))

    def _program(self, dialect: Dialect) -> EngineProgram:
        return self.programs.get(dialect.engine, dialect.program)

    async def driver(self, dialect: Dialect) -> Driver:
        program = self._program(dialect)
        driver = self._drivers.get(program.key)
        if driver is not None and driver.process.running:
            return driver
        if driver is not None:
            await driver.process.kill()
        driver = (
            CecpEngine(
                [program.path], nice=self.nice, name=program.key, mate_score=program.mate_score
            )
            if program.protocol == "cecp"
            else UciEngine([program.path], nice=self.nice, name=program.key)
        )
        self._drivers[program.key] = driver
        await driver.start()
        return driver

    def versions(self) -> dict[str, str]:
        return {key: d.version for key, d in self._drivers.items()}

    async def close(self) -> None:
        drivers, self._drivers = self._drivers, {}
        for driver in drivers.values():
            await driver.close()

    async def reset(self, variant: str | None = None) -> None:
        """Kill every engine (or only the one that plays ``variant``): a search was abandoned
        midway (its job is over, or an analysis gave way to a move), and a driver cut off in
        the middle of a search is in no state to be asked again. The next search starts its
        engine afresh; the other engines stay warm."""
        if variant is None:
            drivers, self._drivers = self._drivers, {}
        else:
            key = self._program(self.dialect(variant)).key
            drivers = {key: self._drivers.pop(key)} if key in self._drivers else {}
        for driver in drivers.values():
            await driver.process.kill()

    async def _search(
        self,
        dialect: Dialect,
        position: EnginePosition,
        limits: SearchLimits,
        on_info: Callable[[SearchResult], None] | None = None,
    ) -> SearchResult:
        """One search; an engine that fails is killed, restarted, and asked once more."""
        options = tuple(
            (name, variants_ini() if value == "<variants.ini>" else value)
            for name, value in dialect.options + limits.options
        )
        limits = replace(limits, options=options)
        try:
            driver = await self.driver(dialect)
            return await driver.search(position, limits, on_info)
        except EngineRefused:
            raise  # the engine's rules differ here: asking again would not help
        except EngineError as exc:
            log.warning("%s failed (%s): restarting it", dialect.engine, exc)
            self.restarts[dialect.engine] += 1
            await self._kill(dialect)
        retry = replace(
            limits,
            clock=None,
            movetime_ms=min(limits.movetime_ms or RETRY_MS, RETRY_MS),
            deadline_ms=RETRY_MS + DEADLINE_MARGIN_MS,
        )
        try:
            driver = await self.driver(dialect)
            return await driver.search(position, retry, on_info)
        except EngineError as exc:
            log.warning("%s failed again (%s)", dialect.engine, exc)
            self.restarts[dialect.engine] += 1
            await self._kill(dialect)
            raise

    async def _kill(self, dialect: Dialect) -> None:
        driver = self._drivers.pop(self._program(dialect).key, None)
        if driver is not None:
            await driver.process.kill()

    def _count(self, variant: str, reason: str, detail: str) -> None:
        self.fallbacks[variant, reason] += 1
        log.warning("fallback in %s: %s (%s)", variant, reason, detail)

    async def best_move(
        self, game: Game, level: int, clock: EngineClock | None = None
    ) -> MoveAnswer:
        """The computer's move in ``game`` at ``level``: always legal by our rules, None
        only when the game is over."""
        legal = game.legal_moves()
        if not legal:
            return MoveAnswer(None, None)
        variant = game.variant.name
        dialect = self.dialect(variant)
        limits = think_limits(dialect.engine, level, clock, first_move=game.ply < 2)
        position = dialect.position(game)
        try:
            result = await self._search(dialect, position, limits)
        except EngineError as exc:
            reason = "engine_refused" if isinstance(exc, EngineRefused) else "engine_failed"
            self._count(variant, reason, str(exc))
            return MoveAnswer(fallback_move(game.position, legal), None, reason)
        ours = dialect.from_engine(game.position, result.bestmove)
        if ours is not None:
            blunder = level_blunder(dialect.engine, level)
            if blunder and self.rng.random() < blunder:  # a low level's deliberate slip
                return MoveAnswer(self.rng.choice(legal), result.bestmove, None, result)
            return MoveAnswer(ours, result.bestmove, None, result)
        reason = "no_move" if result.bestmove is None else "illegal_move"
        self._count(variant, reason, f"engine said {result.bestmove!r}")
        if dialect.program.protocol == "uci" and result.bestmove is not None:
            # Ask again, the search restricted to our legal moves (UCI "searchmoves"): the
            # engine's best move among those the spec allows.
            retry = replace(
                limits,
                clock=None,
                movetime_ms=RETRY_MS,
                deadline_ms=RETRY_MS + DEADLINE_MARGIN_MS,
                searchmoves=tuple(legal),
            )
            try:
                again = await self._search(dialect, position, retry)
            except EngineError:
                again = None
            alternative = (
                dialect.from_engine(game.position, again.bestmove) if again is not None else None
            )
            if alternative is not None:
                return MoveAnswer(alternative, result.bestmove, reason, again)
        return MoveAnswer(fallback_move(game.position, legal), result.bestmove, reason, result)

    async def analyse(
        self,
        game: Game,
        ply: int,
        movetime_ms: int | None,
        depth: int | None,
        on_info: Callable[[SearchResult], None] | None = None,
    ) -> AnalysisEntry | None:
        """The evaluation of ``game`` after ``ply`` moves (None for a finished position, and
        for one the engine refuses: its rules differ from the spec's, and the game got there by
        a move the spec allows and it does not — counted as ``analysis_refused``; the job goes
        on with the other plies rather than being given back to fail again and again)."""
        pos = game.position_at(ply)
        probe = Game(game.variant, pos.fen()) if ply < game.ply else game
        if ply < game.ply and not probe.legal_moves():
            return None
        if ply == game.ply and game.outcome() is not None:
            return None
        dialect = self.dialect(game.variant.name)
        if movetime_ms is None and depth is None:
            movetime_ms = 1000
        deadline = DEPTH_ONLY_MS + 2000 if movetime_ms is None else search_deadline_ms(movetime_ms)
        limits = SearchLimits(movetime_ms=movetime_ms, depth=depth, deadline_ms=deadline)
        started = time.monotonic()
        try:
            result = await self._search(dialect, dialect.position(game, ply), limits, on_info)
        except EngineRefused as exc:
            self._count(game.variant.name, "analysis_refused", f"ply {ply}: {exc}")
            return None
        best = dialect.from_engine(pos, result.bestmove)
        pv = translate_line(game, ply, dialect, result.pv)
        if best is not None and (not pv or pv[0] != best):
            pv = [best]
        score = result.score
        if score is None:
            score_json: ScoreView = {"cp": 0}
        else:
            score_json = score.first_players_json(pos.turn)
        return AnalysisEntry(
            ply=ply,
            score=score_json,
            best=best,
            pv=pv,
            depth=result.depth,
            nodes=result.nodes,
            time_ms=int((time.monotonic() - started) * 1000),
        )

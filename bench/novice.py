"""A beginner's stand-in for ``bench_engines.py beginner``: is level 1 beatable by a beginner?

Nobody here can sit beginners at the board, so level 1 plays this instead: a player who sees a
mate in one, takes a piece it can take for free (nothing of the opponent attacks the square
afterwards), takes anything it can half of the other times, and otherwise plays a random legal
move — it never looks at what it leaves hanging, nor at any threat. ``careful``: a beginner who
has learnt the first lesson — its random move is one after which nothing of the opponent's
attacks the square the piece went to (when it has such a move). It has the same interface
as :class:`server.worker.computer.Computer` for the match loop (``best_move``, ``analyse``,
``fallbacks``, ``restarts``, ``close``); positions are judged at the ply cap by the engine of
the other side (``analyst``).
"""

from __future__ import annotations

import collections
import random
from typing import Any

from server.rules import Game
from server.worker.computer import AnalysisEntry, Computer, MoveAnswer


class Novice:
    def __init__(self, rng: random.Random, analyst: Computer, careful: bool = False) -> None:
        self._rng = rng
        self._careful = careful
        self._analyst = analyst
        self.fallbacks: collections.Counter[tuple[str, str]] = collections.Counter()
        self.restarts: collections.Counter[str] = collections.Counter()

    async def best_move(self, game: Game, level: int, clock: Any = None) -> MoveAnswer:
        pos = game.position
        legal = sorted(game.legal_moves())
        by_text = pos.legal_by_text()
        free: list[str] = []
        captures: list[str] = []
        safe: list[str] = []
        for text in legal:
            move = by_text.get(text)
            if move is None:
                continue  # the Lion's pass
            after = pos.play(move)
            if after.is_check() and not after.has_legal_move():
                return MoveAnswer(text, None)
            unattacked = not after.attacked(move.to_sq, after.turn)
            if unattacked:
                safe.append(text)
            if pos.is_capture(move):
                captures.append(text)
                if unattacked:
                    free.append(text)
        if free:
            choice = self._rng.choice(free)
        elif captures and self._rng.random() < 0.5:
            choice = self._rng.choice(captures)
        elif self._careful and safe:
            choice = self._rng.choice(safe)
        else:
            choice = self._rng.choice(legal)
        return MoveAnswer(choice, None)

    async def analyse(
        self, game: Game, ply: int, movetime: int | None, depth: int | None
    ) -> AnalysisEntry | None:
        return await self._analyst.analyse(game, ply, movetime, depth)

    async def close(self) -> None:
        return None

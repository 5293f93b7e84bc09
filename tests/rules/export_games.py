"""Seeded random games and made-up records for the export tests (test_export_pgn.py,
test_export_usi.py, test_export_kif.py, test_export_analysis.py): move policies that favour
what an export must show (promotions, drops, captures, multi-leg Lion moves), a cache of the
games, and a record of a game with distinct clocks."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from datetime import UTC, datetime

from server.rules import Game, MoveRecord, get_variant
from server.rules.record import GameRecord
from server.rules.time_control import Byoyomi, Fischer

STARTED = datetime(2024, 5, 1, 12, 30, 5, tzinfo=UTC)
FINISHED = datetime(2024, 5, 1, 12, 58, 0, tzinfo=UTC)
BLITZ = Fischer(180_000, 2_000)
BYOYOMI = Byoyomi(600_000, 30_000, 3)


Policy = Callable[[Game, list[str], random.Random], str]


def lively(game: Game, moves: list[str], rng: random.Random) -> str:
    """Random play that favours promotions, drops and captures, so exports show them."""
    pos = game.position
    promotions = [m for m in moves if m.endswith("+") or re.search(r"\d[a-z]$", m)]
    if promotions and rng.random() < 0.8:
        return rng.choice(promotions)
    drops = [m for m in moves if "@" in m]
    if drops and rng.random() < 0.3:
        return rng.choice(drops)
    captures = [m for m in moves if pos.is_capture(pos.move_from_uci(m))]
    if captures and rng.random() < 0.5:
        return rng.choice(captures)
    return rng.choice(moves)


def anything(_game: Game, _move: str) -> bool:
    return True


_GAMES: dict[tuple[object, ...], Game] = {}


def lion_first(game: Game, moves: list[str], rng: random.Random) -> str:
    """Random Dai Shogi play that makes many multi-leg Lion moves and a few passes."""
    multi_leg = [m for m in moves if "," in m]
    if multi_leg and rng.random() < 0.6:
        return rng.choice(multi_leg)
    if "@@@@" in moves and rng.random() < 0.05:
        return "@@@@"
    return lively(game, [m for m in moves if m != "@@@@"] or moves, rng)


def play_game(
    name: str,
    seed: int,
    plies: int,
    policy: Policy = lively,
    start_fen: str | None = None,
    allowed: Callable[[Game, str], bool] = anything,
) -> Game:
    """A seeded random game (cached: several tests look at the same games; never mutated)."""
    key = (name, seed, plies, policy, start_fen, allowed)
    if key not in _GAMES:
        _GAMES[key] = _play(name, seed, plies, policy, start_fen, allowed)
    return _GAMES[key]


def _play(
    name: str,
    seed: int,
    plies: int,
    policy: Policy,
    start_fen: str | None,
    allowed: Callable[[Game, str], bool],
) -> Game:
    variant = get_variant(name)
    rng = random.Random(seed)
    game = Game(variant, start_fen or variant.random_start_fen(rng))
    while game.ply < plies and game.outcome() is None:
        moves = [m for m in game.legal_moves() if allowed(game, m)]
        if not moves:
            break
        game.play(policy(game, moves, rng))
    return game


def record_of(game: Game, **fields: object) -> GameRecord:
    """A record of ``game`` with made-up but distinct clocks: the mover's clock after ply i
    is 600 s - 1.3 s * i (+ a few ms), thinking time 1.2 s * i."""
    moves = tuple(
        MoveRecord(i, uci, display, 600_000 - 1_300 * i + 7 * (i % 3), spent_ms=1_200 * i)
        for i, (uci, display) in enumerate(zip(game.moves, game.displays, strict=True), 1)
    )
    outcome = game.outcome()
    values: dict[str, object] = {
        "id": "g1",
        "variant": game.variant.name,
        "moves": moves,
        "start_fen": game.start_fen,
        "first_name": "alice",
        "second_name": "bob",
        "time_control": BYOYOMI if game.variant.family == "shogi" else BLITZ,
        "speed": "rapid",
        "rated": False,
        "status": "finished",
        "created_at": STARTED,
        "started_at": STARTED,
        "finished_at": FINISHED,
        "result": outcome.result() if outcome else "1-0",
        "termination": str(outcome.termination) if outcome else "resignation",
    }
    values.update(fields)
    return GameRecord(**values)  # type: ignore[arg-type]

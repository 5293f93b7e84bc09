"""A game's history costs the garbage collector nothing per ply, and still answers for every ply.

Older positions are kept as plain tuples (Position.snapshot), repetition plies as tuples and
moves as the variant tables' shared instances, so a full collection of a server holding
thousands of games does not scan an object per ply (docs/benchmarks.md, "Garbage collection").
"""

from __future__ import annotations

import gc
import random

from server.rules import Game, Position, get_variant


def random_game(name: str, plies: int, seed: int) -> tuple[Game, list[str], list[list[str]]]:
    """A seeded random game; the FEN and the legal list after each ply (index 0: the start)."""
    game = Game(get_variant(name))
    rng = random.Random(seed)
    fens = [game.fen()]
    legal = [game.legal_moves()]
    while game.ply < plies and game.outcome() is None:
        game.play(rng.choice(game.legal_moves()))
        fens.append(game.fen())
        legal.append(game.legal_moves())
    return game, fens, legal


def test_old_positions_and_repetition_plies_are_not_tracked_by_the_collector() -> None:
    game, _, _ = random_game("shoshogi", 40, seed=3)
    assert game.ply == 40
    # The collector stops tracking a tuple when it examines it and finds only untracked items
    # in it. A snapshot nests tuples three deep (snapshot, royals, a side's royal squares),
    # so three collections untrack it whatever order each pass meets them in.
    for _ in range(3):
        gc.collect()
    history = game._positions
    assert all(isinstance(p, Position) for p in history[-2:])
    assert not any(isinstance(p, Position) for p in history[:-2])
    assert not any(gc.is_tracked(p) for p in history[:-2])
    assert not any(gc.is_tracked(plies) for plies in game._seen.values())


def test_moves_kept_are_the_tables_shared_instances() -> None:
    game, _, _ = random_game("wildcastle", 30, seed=5)
    shared = game.variant.t.shared
    assert all(shared(m) is m for m in game._moves)


def test_every_ply_is_still_answered_after_snapshots_and_undo() -> None:
    for name, seed in (("minishogi", 1), ("wildcastle", 2), ("daishogi", 3)):
        game, fens, legal = random_game(name, 24, seed)
        for ply, fen in enumerate(fens):
            assert game.position_at(ply).fen() == fen
        while game.ply > 10:
            game.undo()
            assert game.fen() == fens[game.ply]
            assert game.legal_moves() == legal[game.ply]
        assert game.position_at(game.ply - 1).fen() == fens[game.ply - 1]

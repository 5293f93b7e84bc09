"""A game's history costs the garbage collector nothing per ply, and still answers for every ply.

Older positions are kept as plain tuples (Position.snapshot), repetition plies as tuples and
moves as the variant tables' shared instances, so a full collection of a server holding
thousands of games does not scan an object per ply (docs/benchmarks.md, "Garbage collection").
"""

from __future__ import annotations

import gc
import random

import pytest

from server.rules import Game, IllegalMoveError, Position, get_variant


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


def test_outcome_decided_when_asked_matches_one_decided_after_every_move() -> None:
    """Game.play leaves the outcome undecided (a server asks for it while the move is being
    stored); asked late, after undoing, or never asked at all, it is the same ending a game
    asked after every move reaches, for every variant."""
    for name in ("minishogi", "shoshogi", "wildcastle", "spartan", "daishogi"):
        for seed in range(6):
            eager, _, _ = random_game(name, 400 if name != "daishogi" else 60, seed)
            lazy = Game(get_variant(name))
            for uci in eager.moves:
                lazy.play(uci)  # never asks for the outcome between moves
            assert lazy.outcome() == eager.outcome(), (name, seed)
            plies = len(eager.moves)
            if plies >= 2:
                lazy.undo()  # the outcome of the ply before, never asked for
                replay = Game(get_variant(name))
                for uci in eager.moves[:-1]:
                    replay.play(uci)
                    replay.outcome()
                assert lazy.outcome() == replay.outcome() is None, (name, seed)
                assert lazy.legal_moves() == replay.legal_moves()


def test_a_finished_game_refuses_moves_even_if_nobody_asked_for_its_outcome() -> None:
    ended = next(
        game
        for game in (random_game("minishogi", 300, seed)[0] for seed in range(200))
        if game.outcome() is not None
    )
    replay = Game(get_variant("minishogi"))
    for uci in ended.moves:
        replay.play(uci)  # never asks for the outcome
    with pytest.raises(IllegalMoveError, match="over"):
        replay.play(ended.moves[-1])


def test_legal_lists_share_their_move_texts() -> None:
    """A room keeps every move event's legal list for the game's life: the same move's text is
    one shared string, not a fresh one per list (about 2 KB per event otherwise)."""
    for name in ("minishogi", "shoshogi", "wildcastle", "spartan", "daishogi"):
        first, second = Game(get_variant(name)), Game(get_variant(name))
        a, b = first.legal_moves(), second.legal_moves()
        assert a == b and all(x is y for x, y in zip(a, b, strict=True)), name
        game, _, legal = random_game(name, 30, seed=5)
        again = Game(get_variant(name))
        for uci, before in zip(game.moves, legal, strict=False):
            now = again.legal_moves()
            assert now == before
            fresh = [x for x, y in zip(now, before, strict=True) if x is not y]
            # Only multi-leg moves, and chess promotions (their text depends on the piece).
            assert all("," in x or x[-1].isalpha() for x in fresh), (name, fresh)
            again.play(uci)

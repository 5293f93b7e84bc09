"""``Hub.prepare``: work done while a move is being stored changes nothing anyone sees.

The driver calls ``hub.prepare(token)`` once a move's write is on its way to the database, so
that the next legal moves, the outcome and the move event are built while the database works
(docs/architecture.md, "Transport and composition root": the driver). Whether or not it was called, and whether the write then
succeeds or fails, every connection must receive exactly the same messages.
"""

from __future__ import annotations

import random

import pytest
from hub_harness import Harness, one, room_of, start_game

from server.hub.messages import Message

VARIANTS = ["minishogi", "shoshogi", "wildcastle", "spartan", "daishogi"]


def play_random_game(h: Harness, variant: str, seed: int, fail_every: int) -> list[Message]:
    """Play a seeded random game to its end (or 120 plies); every ``fail_every``-th write fails
    once and the move is played again. Returns everything both players received."""
    rng = random.Random(seed)
    game_id = start_game(h, variant=variant)
    room = room_of(h, game_id)
    received: list[Message] = []
    writes = 0
    while room.status == "started" and room.game.ply < 120:
        ply = room.game.ply + 1
        conn = 1 if ply % 2 else 2
        uci = rng.choice(room.game.legal_moves())
        h.advance(rng.randrange(0, 2_000))
        h.send(conn, "move", ack=ply, game=game_id, ply=ply, move=uci)
        writes += 1
        if writes % fail_every == 0:
            h.fail("disk full")
            h.send(conn, "move", ack=ply, game=game_id, ply=ply, move=uci)
        h.commit_all()
        received += h.inbox(1) + h.inbox(2)
    return received


@pytest.mark.parametrize("variant", VARIANTS)
def test_prepare_changes_nothing_anyone_sees(variant: str) -> None:
    for seed in range(4 if variant != "daishogi" else 1):
        plain = play_random_game(Harness(auto_commit=False), variant, seed, fail_every=7)
        prepared = play_random_game(
            Harness(auto_commit=False, prepare=True), variant, seed, fail_every=7
        )
        assert [(m.t, m.v, m.a, m.d) for m in prepared] == [(m.t, m.v, m.a, m.d) for m in plain]
        assert any(m.t == "move" for m in plain)


def test_a_prepared_move_that_fails_to_save_is_undone_exactly() -> None:
    h = Harness(auto_commit=False, prepare=True)
    game_id = start_game(h)
    room = room_of(h, game_id)
    legal_before, fen_before = room.game.legal_moves(), room.game.fen()
    h.send(1, "move", ack=5, game=game_id, ply=1, move="a1b2")
    h.fail("database unavailable")
    error = one(h.inbox(1), "error")
    assert error.d["code"] == "move_not_saved" and error.d["state"]["legal"] == legal_before
    assert room.game.fen() == fen_before and room.game.legal_moves() == legal_before
    assert h.inbox(2) == []


def test_prepare_ignores_tokens_it_does_not_know() -> None:
    h = Harness(auto_commit=False)
    game_id = start_game(h)
    h.hub.prepare(987_654)  # never issued
    h.send(1, "move", game=game_id, ply=1, move="a1b2")
    token = h.pending[0].token
    h.commit()
    h.hub.prepare(token)  # already reported
    assert room_of(h, game_id).game.ply == 1

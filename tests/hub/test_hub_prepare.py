"""``Hub.prepare``: work done while a move is being stored changes nothing anyone sees.

The driver calls ``hub.prepare(token)`` once a move's write is on its way to the database, so
that the next legal moves, the outcome and the move event are built while the database works
(docs/architecture.md, "Transport and composition root": the driver). Whether or not it was called, and whether the write then
succeeds or fails, every connection must receive exactly the same messages.
"""

from __future__ import annotations

import random

import pytest
from hub_harness import Harness, one, player, room_of, start_game

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


def play_disturbed_game(h: Harness, variant: str, seed: int) -> dict[int, list[Message]]:
    """A seeded random game in which, while each move is being written, things happen that
    change what the commit must send: an observer (conn 3) joins or leaves, someone chats, the
    mover sends the move again, an offer is tried (refused: busy); and between moves the
    opponent sometimes offers a draw or a takeback, which the next move cancels. Every fifth
    write fails once. Returns what each connection received."""
    rng = random.Random(seed)
    game_id = start_game(h, variant=variant)
    h.connect(3, player("carol"))
    room = room_of(h, game_id)
    received: dict[int, list[Message]] = {1: [], 2: [], 3: []}
    writes = 0
    while room.status == "started" and room.game.ply < 80:
        ply = room.game.ply + 1
        mover, other = (1, 2) if ply % 2 else (2, 1)
        if ply > 2 and rng.random() < 0.15:
            kind = rng.choice(["draw", "takeback"])
            h.send(other, f"{kind}_offer", ack=f"o{ply}", game=game_id)
        uci = rng.choice(room.game.legal_moves())
        h.send(mover, "move", ack=ply, game=game_id, ply=ply, move=uci)
        for _ in range(rng.randrange(3)):
            disturbance = rng.randrange(5)
            if disturbance == 0:
                h.send(3, "join", ack="j", game=game_id, v=max(0, room.log.version - 1))
            elif disturbance == 1:
                h.send(3, "leave", ack="l", game=game_id)
            elif disturbance == 2:
                h.send(rng.choice([1, 2, 3]), "chat", game=game_id, text=f"ply {ply}")
            elif disturbance == 3:
                h.send(mover, "move", ack=f"again{ply}", game=game_id, ply=ply, move=uci)
            else:
                h.send(other, "draw_offer", ack="busy", game=game_id)
        writes += 1
        if writes % 5 == 0:
            h.fail("disk full")
            h.send(mover, "move", ack=ply, game=game_id, ply=ply, move=uci)
        h.commit_all()
        for conn, messages in received.items():
            messages += h.inbox(conn)
    return received


@pytest.mark.parametrize("variant", ["minishogi", "wildcastle"])
def test_a_prepared_release_is_built_again_when_the_room_changed_meanwhile(variant: str) -> None:
    for seed in range(6):
        plain = play_disturbed_game(Harness(auto_commit=False), variant, seed)
        h = Harness(auto_commit=False, prepare=True)
        prepared = play_disturbed_game(h, variant, seed)
        for conn in (1, 2, 3):
            assert [(m.t, m.v, m.a, m.d) for m in prepared[conn]] == [
                (m.t, m.v, m.a, m.d) for m in plain[conn]
            ], f"connection {conn}, seed {seed}"
        kinds = {m.t for m in plain[1] + plain[3]}
        assert {"move", "chat", "offer"} <= kinds, kinds


def test_the_commit_releases_the_prepared_effects_themselves() -> None:
    """What ``prepare`` returns is what ``persisted`` begins with (the same objects, so that the
    driver's frames encoded ahead are used), and only when nothing changed in between."""
    h = Harness(auto_commit=False)
    game_id = start_game(h)
    h.send(1, "move", ack=1, game=game_id, ply=1, move="a1b2")
    token = h.pending[0].token
    released = h.hub.prepare(token)
    assert [type(e).__name__ for e in released] == ["Send", "Broadcast"]
    assert h.hub.prepare(token) == ()  # prepared once
    effects = h.commit()
    assert tuple(effects[: len(released)]) == released
    assert all(a is b for a, b in zip(effects, released))

    h.send(2, "move", ack=2, game=game_id, ply=2, move="e5d4")
    token = h.pending[0].token
    released = h.hub.prepare(token)
    h.send(1, "chat", game=game_id, text="hello")  # takes the next version
    effects = h.commit()
    moves = [e for e in effects if getattr(getattr(e, "message", None), "t", None) == "move"]
    assert moves and all(e not in released for e in moves)
    assert moves[0].message.v == room_of(h, game_id).log.version

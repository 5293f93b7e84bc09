"""Hub game rooms with the real engine, two-phase moves: a move is acknowledged and broadcast
only once it is persisted; duplicates are re-acknowledged, bad moves refused with the state,
a room is busy while a write is pending, a failed write undoes the move exactly; versions
only increase. Manual clock, no event loop (helpers in hub_harness.py).
"""

import pytest
from hub_harness import (
    MATE_LINE,
    Harness,
    move,
    one,
    only,
    play_line,
    player,
    room_of,
    start_game,
    unchanged_after,
)

from server.hub.effects import MoveAppended
from server.hub.messages import Message
from server.rules import MoveRecord


def test_move_is_acknowledged_and_broadcast_only_after_it_is_persisted() -> None:
    h = Harness(auto_commit=False)
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2", ack=11)
    assert h.inbox(1) == [] and h.inbox(2) == []
    assert len(h.pending) == 1
    record = h.pending[0].record
    assert record == MoveAppended(game_id, MoveRecord(1, "a1b2", "K-4d", 60_000, 0, None))
    h.commit()
    mine, theirs = h.inbox(1), h.inbox(2)
    ack = one(mine, "ack")
    assert ack.a == 11 and ack.d == {"game": game_id, "ply": 1}
    event = one(theirs, "move")
    assert event is one(mine, "move")  # one message object, encoded once
    assert event.v is not None and event.v >= 1
    assert event.d["ply"] == 1 and event.d["uci"] == "a1b2" and event.d["display"] == "K-4d"
    assert event.d["side"] == "first" and event.d["turn"] == "second"
    assert event.d["fen"] == room_of(h, game_id).game.fen()
    assert event.d["legal"] == room_of(h, game_id).game.legal_moves() != []
    assert event.d["clocks"] == {"first": {"ms": 60_000}, "second": {"ms": 60_000}, "running": None}


def test_duplicate_move_is_reacknowledged_and_changes_nothing() -> None:
    h = Harness()
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2")
    messages = unchanged_after(h, game_id, lambda: move(h, 1, game_id, 1, "a1b2", ack=5))
    assert messages == [Message("ack", {"game": game_id, "ply": 1}, a=5)]


@pytest.mark.parametrize(
    ("conn", "ply", "uci", "code"),
    [
        (1, 1, "b1b2", "stale_move"),  # ply 1 already played with another move
        (2, 3, "d5d4", "stale_move"),  # from the future
        (1, 2, "b1b2", "not_your_turn"),
        (2, 2, "a5a1", "illegal_move"),
        (2, 2, "hello", "illegal_move"),
    ],
)
def test_bad_moves_get_a_clear_error_with_state_and_change_nothing(
    conn: int, ply: int, uci: str, code: str
) -> None:
    h = Harness()
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2")
    messages = unchanged_after(h, game_id, lambda: move(h, conn, game_id, ply, uci, ack=3))
    error = one(messages, "error")
    assert error.a == 3 and error.d["code"] == code
    state = error.d["state"]
    assert (
        state["ply"] == 1
        and state["turn"] == "second"
        and state["v"] == room_of(h, game_id).log.version
    )
    assert state["legal"] == room_of(h, game_id).game.legal_moves()


def test_spectator_cannot_move() -> None:
    h = Harness()
    game_id = start_game(h)
    h.connect(3, player("carol"))
    h.send(3, "move", game=game_id, ply=1, move="a1b2")
    assert one(h.inbox(3), "error").d["code"] == "not_a_player"
    assert room_of(h, game_id).records == []


def test_unknown_game_is_refused() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.send(1, "move", game="nope", ply=1, move="a1b2")
    assert one(h.inbox(1), "error").d["code"] == "no_such_game"


def test_room_is_busy_while_a_move_is_pending_and_resends_are_coalesced() -> None:
    h = Harness(auto_commit=False)
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2", ack=1)
    move(h, 1, game_id, 1, "a1b2", ack=2)  # resent before the commit
    assert len(h.pending) == 1 and h.inbox(1) == []
    h.send(2, "resign", game=game_id)
    assert one(h.inbox(2), "error").d["code"] == "busy"
    h.commit()
    acks = only(h.inbox(1), "ack")
    assert [a.a for a in acks] == [1, 2]
    assert h.hub.next_deadline() is not None


def test_failed_persist_undoes_the_move_exactly_and_tells_the_mover() -> None:
    h = Harness(auto_commit=False)
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2")
    h.commit()
    move(h, 2, game_id, 2, "a5a2")
    h.commit()
    room = room_of(h, game_id)
    clock_before, deadline_before = room.clock.state(), h.hub.next_deadline()
    h.clear()
    h.advance(5_000)
    move(h, 1, game_id, 3, "b2c3", ack=9)
    assert h.hub.next_deadline() is None  # nothing fires while the write is pending
    h.fail("database unavailable")
    error = one(h.inbox(1), "error")
    assert error.a == 9 and error.d["code"] == "move_not_saved"
    assert "database unavailable" in error.d["message"] and error.d["state"]["ply"] == 2
    assert h.inbox(2) == []  # the opponent never saw it
    assert room.game.ply == 2 and len(room.records) == 2
    assert room.clock.state() == clock_before
    assert h.hub.next_deadline() == deadline_before
    move(h, 1, game_id, 3, "b2c3")
    h.commit()
    assert len(room.records) == 3


def test_versions_are_strictly_increasing() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, MATE_LINE)
    versions = [m.v for m in h.inbox(2) if m.v is not None and m.t != "game"]
    assert versions == sorted(set(versions)) and len(versions) >= 5

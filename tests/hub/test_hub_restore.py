"""Resuming stored, unfinished games after a restart (Hub.restore_game)."""

import pytest
from hub_harness import Harness, one, player, start_game

from server.hub.effects import GameFinished, MoveAppended
from server.hub.lobby import GameTerms
from server.rules import MoveRecord
from server.rules.time_control import Byoyomi, SideTime

TC = {"kind": "byoyomi", "main_s": 60, "period_s": 10, "periods": 2}
TERMS = GameTerms("minishogi", Byoyomi.from_seconds(60, 10, 2), rated=True)
START_FEN = "rbsgk/4p/5/P4/KGSBR[] w - - 0 1"


def stored_moves(h: Harness) -> list[MoveRecord]:
    return [p.record.move for p in h.committed if isinstance(p.record, MoveAppended)]


def played_game(moves: list[str]) -> list[MoveRecord]:
    h = Harness()
    game_id = start_game(h, tc=TC, rated=True)
    for ply, uci in enumerate(moves, start=1):
        h.advance(70_000 if ply == 3 else 1_000)
        h.send(1 if ply % 2 else 2, "move", game=game_id, ply=ply, move=uci)
    return stored_moves(h)


def test_restored_game_resumes_with_stored_clocks() -> None:
    moves = played_game(["a1b2", "a5a2", "b2c3"])
    assert (moves[2].clock_ms, moves[2].periods_left) == (0, 1)  # 70 s: main time and one period
    h = Harness()
    h.connect(1, player("alice"))
    h.clear()
    h.run(h.hub.restore_game("r1", TERMS, (player("alice"), player("bob")), START_FEN, moves, h.now))
    room = h.hub.room("r1")
    assert room is not None and room.started and len(room.records) == 3
    assert room.clock.time(0) == SideTime(0, 1) and room.clock.time(1) == SideTime(60_000, 2)
    assert room.clock.running == 1 and room.clock.deadline() == h.now + 60_000 + 20_000
    assert one(h.inbox(1), "game_start").d["side"] == "first"
    assert room.absent[1] is not None  # bob is not connected here
    assert h.hub.active_game("alice") == h.hub.active_game("bob") == "r1"
    h.connect(2, player("bob"))
    h.send(2, "join", game="r1")
    h.send(2, "move", game="r1", ply=4, move="d5c4", ack=1)
    assert room.termination == "checkmate"


def test_restore_in_the_opening_restarts_the_first_move_window() -> None:
    moves = played_game(["a1b2"])
    h = Harness()
    h.run(h.hub.restore_game("r2", TERMS, (player("alice"), player("bob")), START_FEN, moves, h.now))
    assert h.hub.next_deadline() == h.now + 30_000


def test_a_game_restored_with_no_move_is_aborted_after_the_first_move_window() -> None:
    """A game taken over at ply 0 (its owner died before the first move) does not wait for
    ever: the first-move window restarts at the takeover and ends the game."""
    h = Harness()
    h.connect(1, player("alice"))
    h.run(h.hub.restore_game("r0", TERMS, (player("alice"), player("bob")), START_FEN, [], h.now))
    assert h.hub.next_deadline() == h.now + 30_000
    h.clear()
    h.tick(h.now + 30_000)
    end = one(h.inbox(1), "end")
    assert end.d["termination"] == "abort" and end.d["detail"] == "no_first_move"
    assert h.hub.active_game("alice") is None and h.hub.active_game("bob") is None


def test_restoring_a_finished_position_ends_the_game() -> None:
    moves = played_game(["a1b2", "a5a2", "b2c3", "d5c4"])
    h = Harness()
    h.run(h.hub.restore_game("r3", TERMS, (player("alice"), player("bob")), START_FEN, moves, h.now))
    finished = [p.record for p in h.committed if isinstance(p.record, GameFinished)]
    assert [(f.result, f.termination) for f in finished] == [("0-1", "checkmate")]
    assert h.hub.active_game("alice") is None


def test_corrupt_stored_move_is_refused() -> None:
    h = Harness()
    bad = [MoveRecord(1, "a1b2", "K-4d", 60_000, 0, 2), MoveRecord(2, "a1a5", "K-5a", 60_000, 0, 2)]
    with pytest.raises(ValueError, match="a1a5"):
        h.hub.restore_game("r4", TERMS, (player("alice"), player("bob")), START_FEN, bad, h.now)
    assert h.hub.room("r4") is None and h.hub.active_game("alice") is None


def test_stored_moves_out_of_sequence_are_refused() -> None:
    h = Harness()
    moves = played_game(["a1b2", "a5a2"])
    with pytest.raises(ValueError, match="numbered"):
        h.hub.restore_game("r5", TERMS, (player("alice"), player("bob")), START_FEN, moves[1:], h.now)
    assert h.hub.room("r5") is None and h.hub.active_game("alice") is None

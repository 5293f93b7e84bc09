"""Hub game rooms with the real engine: two-phase moves, clocks, endings, offers, rooms.

Manual clock, no event loop. Mini-Shogi lines used below:
* ``a1b2 a5a2 b2c3 d5c4`` — the second player mates with the 4th move.
* ``b1b2 d5d4 b2b1 d4d5`` × 3 — 4-fold repetition after 12 moves: the first player loses.
"""

from typing import Any

import pytest
from hub_harness import FISCHER_TC, START, Harness, one, only, player, room_of, start_game

from server.hub.effects import GameFinished, MoveAppended, MovesRetracted, Persist
from server.hub.hub import HubConfig
from server.hub.messages import Message
from server.hub.room import RoomSettings
from server.rules import MoveRecord

MATE_LINE = ["a1b2", "a5a2", "b2c3", "d5c4"]
REPETITION_LINE = ["b1b2", "d5d4", "b2b1", "d4d5"] * 3


def move(h: Harness, conn: int, game_id: str, ply: int, uci: str, **kw: Any) -> None:
    h.send(conn, "move", game=game_id, ply=ply, move=uci, **kw)


def play_line(h: Harness, game_id: str, line: list[str], step_ms: int = 1_000) -> None:
    """Play moves alternately from conn 1 (first) and conn 2 (second), ``step_ms`` apart."""
    for uci in line:
        h.advance(step_ms)
        ply = len(room_of(h, game_id).records) + 1
        move(h, 1 if ply % 2 == 1 else 2, game_id, ply, uci)
    assert len(room_of(h, game_id).records) == len(line) or room_of(h, game_id).finished


def unchanged_after(h: Harness, game_id: str, action: Any) -> list[Message]:
    """Run ``action``; assert that the room's version, moves and clocks did not change."""
    room = room_of(h, game_id)
    before = (room.log.version, list(room.records), room.clock.state(), room.game.fen())
    h.clear()
    action()
    assert h.pending == []
    assert (room.log.version, list(room.records), room.clock.state(), room.game.fen()) == before
    return h.inbox(1) + h.inbox(2)


# --- two-phase moves -----------------------------------------------------------------------------


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


# --- clocks in games -------------------------------------------------------------------------------


def test_clock_starts_after_both_first_moves() -> None:
    h = Harness()
    game_id = start_game(h)
    room = room_of(h, game_id)
    h.advance(4_000)
    move(h, 1, game_id, 1, "a1b2")
    assert room.clock.running is None
    h.advance(7_000)
    move(h, 2, game_id, 2, "a5a2")
    second_start = h.now
    assert room.clock.running == 0 and room.clock.deadline() == second_start + 60_000
    h.advance(3_000)
    move(h, 1, game_id, 3, "b2c3")
    spent = [p.record.move for p in h.committed if isinstance(p.record, MoveAppended)]
    assert [(r.spent_ms, r.clock_ms) for r in spent] == [(0, 60_000), (0, 60_000), (3_000, 58_000)]
    assert h.hub.next_deadline() == h.now + 60_000


def test_flag_falls_exactly_at_the_deadline_via_tick() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2", "a5a2"])
    deadline = h.now + 60_000
    assert h.hub.next_deadline() == deadline
    h.clear()
    h.tick(deadline - 1)
    assert h.inbox(1) == [] and not room_of(h, game_id).finished
    h.tick(deadline)
    end = one(h.inbox(2), "end")
    assert (
        end.d["termination"] == "time" and end.d["result"] == "0-1" and end.d["winner"] == "second"
    )
    assert end.d["clocks"]["first"] == {"ms": 0}
    finished = [p.record for p in h.committed if isinstance(p.record, GameFinished)]
    assert [(f.result, f.termination) for f in finished] == [("0-1", "time")]
    assert h.hub.active_game("alice") is None and h.hub.active_game("bob") is None


def test_move_arriving_at_the_deadline_loses_on_time() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2", "a5a2"])
    h.advance(60_000)  # no tick ran: the move itself finds the flag down
    move(h, 1, game_id, 3, "b2c3", ack=4)
    messages = h.inbox(1)
    assert one(messages, "end").d["termination"] == "time"
    error = one(messages, "error")
    assert error.a == 4 and error.d["code"] == "game_over"
    assert len(room_of(h, game_id).records) == 2


def test_move_in_the_last_millisecond_counts() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2", "a5a2"])
    h.advance(59_999)
    move(h, 1, game_id, 3, "b2c3")
    room = room_of(h, game_id)
    assert len(room.records) == 3 and not room.finished
    assert room.clock.time(0).main_ms == 1 + 1_000


def test_mating_move_in_the_last_millisecond_of_the_last_period_wins() -> None:
    h = Harness()
    game_id = start_game(h, tc={"kind": "byoyomi", "main_s": 0, "period_s": 10, "periods": 1})
    play_line(h, game_id, ["a1b2", "a5a2"])
    h.advance(9_999)
    move(h, 1, game_id, 3, "b2c3")
    h.advance(9_999)
    deadline = h.hub.next_deadline()
    assert deadline == h.now + 1
    move(h, 2, game_id, 4, "d5c4")
    room = room_of(h, game_id)
    assert (room.result, room.termination) == ("0-1", "checkmate")
    h.tick(deadline + 1_000)
    assert room.termination == "checkmate"
    end = one(h.inbox(1), "end")
    assert end.d["clocks"]["second"] == {"ms": 0, "periods": 1, "period_ms": 10_000}


def test_byoyomi_periods_in_a_game() -> None:
    h = Harness()
    game_id = start_game(h, tc={"kind": "byoyomi", "main_s": 5, "period_s": 10, "periods": 3})
    play_line(h, game_id, ["a1b2", "a5a2"])
    h.advance(5_000 + 25_000)  # main time, two whole periods, half of the third
    h.clear()
    move(h, 1, game_id, 3, "b2c3")
    record = h.committed[-1].record
    assert isinstance(record, MoveAppended)
    assert (record.move.clock_ms, record.move.periods_left, record.move.spent_ms) == (0, 1, 30_000)
    event = one(h.inbox(2), "move")
    assert event.d["clocks"]["first"] == {"ms": 0, "periods": 1, "period_ms": 10_000}
    # Bob is untouched; alice's next turn has one full period.
    move(h, 2, game_id, 4, "d5c4")


def test_byoyomi_flag_when_the_last_period_runs_out() -> None:
    h = Harness()
    game_id = start_game(h, tc={"kind": "byoyomi", "main_s": 5, "period_s": 10, "periods": 2})
    play_line(h, game_id, ["a1b2", "a5a2"])
    assert h.hub.next_deadline() == h.now + 25_000
    h.tick(h.now + 25_000)
    room = room_of(h, game_id)
    assert (room.result, room.termination) == ("0-1", "time")


def test_lag_compensation_is_credited_within_the_quota() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2", "a5a2"])
    quota = room_of(h, game_id).clock.quota(0)
    h.advance(4_000)
    move(h, 1, game_id, 3, "b2c3", lag_ms=10_000)
    record = h.committed[-1].record
    assert isinstance(record, MoveAppended) and record.move.spent_ms == 4_000 - quota


# --- endings ---------------------------------------------------------------------------------------


def test_checkmate_ends_the_game_and_later_moves_are_refused() -> None:
    h = Harness()
    game_id = start_game(h, rated=True)
    play_line(h, game_id, MATE_LINE)
    end = one(h.inbox(1), "end")
    assert end.d == {
        "game": game_id,
        "result": "0-1",
        "winner": "second",
        "termination": "checkmate",
        "clocks": end.d["clocks"],
    }
    finished = h.committed[-1].record
    assert isinstance(finished, GameFinished)
    assert (finished.rated, finished.result, finished.termination, finished.plies) == (
        True,
        "0-1",
        "checkmate",
        4,
    )
    assert (finished.first_id, finished.second_id) == ("alice", "bob")
    # The mating move resent: re-acknowledged. Anything else: game over.
    h.clear()
    move(h, 2, game_id, 4, "d5c4", ack=1)
    assert one(h.inbox(2), "ack").a == 1
    move(h, 1, game_id, 5, "c3b4")
    assert one(h.inbox(1), "error").d["code"] == "game_over"


def test_repetition_ends_the_game() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, REPETITION_LINE)
    room = room_of(h, game_id)
    assert (room.result, room.termination) == ("0-1", "repetition")


def test_resign() -> None:
    h = Harness()
    game_id = start_game(h, rated=True)
    play_line(h, game_id, ["a1b2", "a5a2"])
    h.clear()
    h.send(2, "resign", game=game_id, ack=7)
    messages = h.inbox(2)
    assert one(messages, "ack").a == 7
    assert one(messages, "end").d["termination"] == "resignation"
    assert room_of(h, game_id).result == "1-0"


def test_first_move_must_arrive_in_time_or_the_game_is_aborted() -> None:
    h = Harness()
    game_id = start_game(h, rated=True)
    assert h.hub.next_deadline() == START + 30_000
    h.tick(START + 29_999)
    assert not room_of(h, game_id).finished
    h.tick(START + 30_000)
    end = one(h.inbox(1), "end")
    assert end.d["termination"] == "abort" and end.d["result"] is None
    assert end.d["detail"] == "no_first_move"
    h.clear()
    h.send(2, "join", game=game_id)
    assert one(h.inbox(2), "game").d["detail"] == "no_first_move"
    finished = h.committed[-1].record
    assert isinstance(finished, GameFinished) and finished.result is None


def test_second_players_first_move_window_starts_at_the_first_move() -> None:
    h = Harness()
    game_id = start_game(h)
    h.advance(20_000)
    move(h, 1, game_id, 1, "a1b2")
    assert h.hub.next_deadline() == h.now + 30_000
    h.tick(h.now + 30_000)
    assert room_of(h, game_id).termination == "abort"


def test_abort_allowed_until_both_sides_have_moved() -> None:
    h = Harness()
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2")
    h.send(2, "abort", game=game_id)
    assert room_of(h, game_id).termination == "abort"
    assert one(h.inbox(1), "end").d["detail"] == "second_aborted"
    h.clear()
    h.send(1, "join", game=game_id)  # a later snapshot still says why
    assert one(h.inbox(1), "game").d["detail"] == "second_aborted"

    h2 = Harness()
    game_id = start_game(h2)
    play_line(h2, game_id, ["a1b2", "a5a2"])
    messages = unchanged_after(h2, game_id, lambda: h2.send(1, "abort", game=game_id))
    assert one(messages, "error").d["code"] == "abort_too_late"


def test_draw_offers_are_unavailable_in_shogi_variants() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2", "a5a2"])
    messages = unchanged_after(h, game_id, lambda: h.send(1, "draw_offer", game=game_id))
    assert one(messages, "error").d["code"] == "draw_offers_unavailable"


def test_claim_draw_refused_in_shogi() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2", "a5a2"])
    messages = unchanged_after(h, game_id, lambda: h.send(1, "claim_draw", game=game_id))
    assert one(messages, "error").d["code"] == "no_draw_claim"


# --- takeback, rematch ---------------------------------------------------------------------------


def test_takeback_of_the_proposers_last_move() -> None:
    h = Harness(auto_commit=False)
    game_id = start_game(h)
    for ply, uci in enumerate(["a1b2", "a5a2", "b2c3"], start=1):
        move(h, 1 if ply % 2 else 2, game_id, ply, uci)
        h.commit()
    h.clear()
    h.send(1, "takeback_offer", game=game_id, ack=1)
    assert one(h.inbox(1), "ack").a == 1
    offer = one(h.inbox(2), "offer")
    assert offer.d == {"game": game_id, "kind": "takeback", "action": "offer", "side": "first"}
    h.send(2, "takeback_accept", game=game_id, ack=2)
    assert h.pending[0].record == MovesRetracted(game_id, 3)
    assert h.inbox(2) == []
    h.commit()
    messages = h.inbox(2)
    assert one(messages, "ack").a == 2
    event = one(messages, "takeback")
    assert event.d["ply"] == 2 and event.d["removed"] == 1 and event.d["turn"] == "first"
    room = room_of(h, game_id)
    assert room.game.ply == 2 and len(room.records) == 2 and room.clock.running == 0


def test_takeback_asked_on_own_turn_removes_two_moves() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2", "a5a2", "b2c3"])
    h.send(2, "takeback_offer", game=game_id)
    h.send(1, "takeback_accept", game=game_id)
    assert [p.record for p in h.committed][-1] == MovesRetracted(game_id, 2)
    room = room_of(h, game_id)
    assert room.game.ply == 1 and room.clock.running is None
    assert h.hub.next_deadline() == h.now + 30_000  # back in the opening window


def test_takeback_refusals() -> None:
    h = Harness()
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2")
    messages = unchanged_after(h, game_id, lambda: h.send(2, "takeback_offer", game=game_id))
    assert one(messages, "error").d["code"] == "no_move_to_take_back"
    messages = unchanged_after(h, game_id, lambda: h.send(2, "takeback_accept", game=game_id))
    assert one(messages, "error").d["code"] == "no_offer"

    rated = Harness()
    game_id = start_game(rated, rated=True)
    move(rated, 1, game_id, 1, "a1b2")
    messages = unchanged_after(
        rated, game_id, lambda: rated.send(1, "takeback_offer", game=game_id)
    )
    assert one(messages, "error").d["code"] == "takeback_rated"


def test_takeback_offer_is_cancelled_by_a_move() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2"])
    h.send(1, "takeback_offer", game=game_id)
    h.clear()
    move(h, 2, game_id, 2, "a5a2")
    cancel = one(h.inbox(1), "offer")
    assert cancel.d["action"] == "cancel" and cancel.d["kind"] == "takeback"
    assert not room_of(h, game_id).state.offer_boxes["takeback"].pending


def test_failed_takeback_changes_nothing() -> None:
    h = Harness(auto_commit=False)
    game_id = start_game(h)
    for ply, uci in enumerate(["a1b2", "a5a2"], start=1):
        move(h, 1 if ply % 2 else 2, game_id, ply, uci)
        h.commit()
    h.send(2, "takeback_offer", game=game_id)
    room = room_of(h, game_id)
    before = (room.game.fen(), room.clock.state(), list(room.records))
    h.send(1, "takeback_accept", game=game_id, ack=3)
    h.clear()
    h.fail()
    assert one(h.inbox(1), "error").d["code"] == "takeback_not_saved"
    assert (room.game.fen(), room.clock.state(), list(room.records)) == before


def test_rematch_swaps_colours() -> None:
    h = Harness()
    game_id = start_game(h, rated=True)
    h.send(1, "rematch_offer", game=game_id)
    assert one(h.inbox(1), "error").d["code"] == "game_not_finished"
    move(h, 1, game_id, 1, "a1b2")
    h.send(1, "resign", game=game_id)
    h.clear()
    h.send(1, "rematch_offer", game=game_id)
    assert one(h.inbox(2), "offer").d["kind"] == "rematch"
    h.send(2, "rematch_accept", game=game_id, ack=8)
    messages = h.inbox(2)
    new_game = one(messages, "ack").d["new_game"]
    assert one(messages, "rematch").d["new_game"] == new_game
    new_room = room_of(h, new_game)
    assert [p.id for p in new_room.players] == ["bob", "alice"]
    assert new_room.terms == room_of(h, game_id).terms and new_room.started
    assert one(messages, "game_start").d["side"] == "first"


def test_rematch_needs_the_opponent_online() -> None:
    h = Harness()
    game_id = start_game(h)
    h.send(1, "resign", game=game_id)
    h.disconnect(2)
    h.send(1, "rematch_offer", game=game_id)
    assert one(h.inbox(1), "error").d["code"] == "opponent_offline"


# --- abandonment -----------------------------------------------------------------------------------


def test_abandoned_game_can_be_claimed_after_the_countdown() -> None:
    h = Harness()
    game_id = start_game(h, rated=True)
    play_line(h, game_id, ["a1b2", "a5a2", "b2c3"])
    room = room_of(h, game_id)
    countdown = room.state.abandon_countdown_ms()
    assert countdown == 30_000  # 1+1 is short: the minimum
    gone_at = h.now
    h.disconnect(2)
    gone = one(h.inbox(1), "gone")
    assert gone.d == {"game": game_id, "side": "second", "claimable": False, "claim_in_ms": 30_000}
    h.advance(29_999)
    messages = unchanged_after(
        h, game_id, lambda: h.send(1, "abandon_claim", game=game_id, outcome="win")
    )
    assert one(messages, "error").d["code"] == "too_early"
    h.tick(gone_at + countdown)
    assert one(h.inbox(1), "gone").d["claimable"] is True
    h.send(1, "abandon_claim", game=game_id, outcome="win", ack=1)
    assert (room.result, room.termination) == ("1-0", "abandonment")


def test_abandonment_draw_claim() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2", "a5a2"])
    h.disconnect(1)
    h.tick(h.now + 30_000)
    h.send(2, "abandon_claim", game=game_id, outcome="draw")
    room = room_of(h, game_id)
    assert (room.result, room.termination) == ("1/2-1/2", "abandonment")


def test_returning_player_cancels_the_countdown() -> None:
    h = Harness()
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2", "a5a2"])
    h.disconnect(2)
    h.advance(10_000)
    h.connect(22, player("bob"))
    hello = one(h.inbox(22), "hello")
    assert hello.d["game"] == game_id
    assert one(h.inbox(1), "back").d == {"game": game_id, "side": "second"}
    h.advance(40_000)
    h.send(1, "abandon_claim", game=game_id, outcome="win")
    assert one(h.inbox(1), "error").d["code"] == "opponent_present"


def test_abandon_claim_before_both_moved_is_refused() -> None:
    h = Harness(HubConfig(room=RoomSettings(first_move_window_ms=100_000)))
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2")
    h.disconnect(2)
    h.tick(h.now + 30_000)
    h.send(1, "abandon_claim", game=game_id, outcome="win")
    assert one(h.inbox(1), "error").d["code"] == "abort_instead"


# --- observers, chat, replay ------------------------------------------------------------------------


def test_observers_get_a_snapshot_and_the_same_stream() -> None:
    h = Harness()
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2")
    h.connect(3, player("carol"))
    h.send(3, "join", game=game_id, ack=1)
    messages = h.inbox(3)
    snapshot = one(messages, "game")
    assert snapshot.d["role"] == "spectator" and snapshot.d["moves"] == ["a1b2"]
    assert snapshot.d["displays"] == ["K-4d"] and snapshot.v == room_of(h, game_id).log.version
    assert one(messages, "ack").d == {"game": game_id, "v": snapshot.v, "snapshot": True}
    h.clear()
    move(h, 2, game_id, 2, "a5a2")
    assert one(h.inbox(3), "move") is one(h.inbox(1), "move")


def test_players_and_spectators_chat_separately() -> None:
    h = Harness()
    game_id = start_game(h)
    h.connect(3, player("carol"))
    h.send(3, "chat", game=game_id, text="hello?")
    assert one(h.inbox(3), "error").d["code"] == "not_joined"
    h.send(3, "join", game=game_id)
    h.clear()
    h.send(1, "chat", game=game_id, text="  good luck  ")
    line = one(h.inbox(2), "chat")
    assert line.d == {
        "game": game_id,
        "room": "players",
        "user": "Alice",
        "user_id": "alice",
        "text": "good luck",
    }
    assert only(h.inbox(3), "chat") == []
    h.clear()
    h.send(3, "chat", game=game_id, text="nice opening")
    assert one(h.inbox(3), "chat").d["room"] == "spectators"
    assert only(h.inbox(1), "chat") == [] and only(h.inbox(2), "chat") == []
    h.send(1, "chat", game=game_id, text="   ")
    assert one(h.inbox(1), "error").d["code"] == "empty_message"


def test_reconnect_replays_missed_events() -> None:
    h = Harness()
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2")
    seen = room_of(h, game_id).log.version
    h.disconnect(2)
    h.connect(22, player("bob"))
    h.send(1, "chat", game=game_id, text="are you there?")
    h.clear()
    h.send(22, "join", game=game_id, v=seen)
    replay = h.inbox(22)
    assert [m.t for m in replay] == ["gone", "back", "chat", "ack"]
    versions = [m.v for m in replay if m.v is not None]
    assert versions == list(range(seen + 1, room_of(h, game_id).log.version + 1))
    # Joined again: live events follow.
    move(h, 22, game_id, 2, "a5a2")
    assert one(h.inbox(22), "move").v == versions[-1] + 1


def test_spectator_replay_skips_players_chat() -> None:
    h = Harness()
    game_id = start_game(h)
    h.connect(3, player("carol"))
    h.send(3, "join", game=game_id)
    seen = room_of(h, game_id).log.version
    h.disconnect(3)
    move(h, 1, game_id, 1, "a1b2")
    h.send(1, "chat", game=game_id, text="secret")
    move(h, 2, game_id, 2, "a5a2")
    h.connect(33, player("carol"))
    h.clear()
    h.send(33, "join", game=game_id, v=seen)
    replay = h.inbox(33)
    assert [m.t for m in replay] == ["move", "move", "ack"]


def test_too_old_version_gets_a_snapshot() -> None:
    h = Harness(HubConfig(room=RoomSettings(event_log_capacity=2)))
    game_id = start_game(h)
    play_line(h, game_id, ["a1b2", "a5a2", "b2c3"])
    h.connect(3, player("carol"))
    h.clear()
    h.send(3, "join", game=game_id, v=0)
    assert [m.t for m in h.inbox(3)] == ["game", "ack"]
    h.send(3, "join", game=game_id, v=room_of(h, game_id).log.version)
    assert [m.t for m in h.inbox(3)] == ["ack"]
    h.send(3, "join", game=game_id, v=999)
    assert [m.t for m in h.inbox(3)] == ["game", "ack"]


def test_finished_rooms_are_evicted_after_their_ttl() -> None:
    h = Harness(HubConfig(finished_room_ttl_ms=60_000))
    game_id = start_game(h)
    h.send(1, "resign", game=game_id)
    assert h.hub.next_deadline() == h.now + 60_000
    h.tick(h.now + 60_000)
    assert h.hub.room(game_id) is None
    h.send(1, "join", game=game_id)
    assert one(h.inbox(1), "error").d["code"] == "no_such_game"
    assert h.hub.next_deadline() is None


def test_failed_game_creation_frees_both_players() -> None:
    h = Harness(auto_commit=False)
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    h.send(1, "seek", variant="minishogi", tc=FISCHER_TC)
    h.send(2, "seek", variant="minishogi", tc=FISCHER_TC)
    game_id = h.hub.active_game("alice")
    assert game_id is not None
    h.clear()
    h.fail("connection refused")
    for conn in (1, 2):
        assert one(h.inbox(conn), "error").d["code"] == "game_not_created"
    assert h.hub.room(game_id) is None and h.hub.active_game("bob") is None
    h.send(1, "seek", variant="minishogi", tc=FISCHER_TC, ack=1)
    assert one(h.inbox(1), "ack").d == {"seek": 3}


def test_game_start_waits_for_absent_players() -> None:
    h = Harness(auto_commit=False)
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    h.send(1, "seek", variant="minishogi", tc=FISCHER_TC)
    h.send(2, "seek", variant="minishogi", tc=FISCHER_TC)
    game_id = h.hub.active_game("alice")
    h.disconnect(2)  # bob leaves before the row is written
    h.commit()
    room = room_of(h, game_id or "")
    assert room.started and room.absent[room.side_of("bob") or 0] is not None


def test_persist_tokens_are_reported_once() -> None:
    h = Harness(auto_commit=False)
    game_id = start_game(h)
    move(h, 1, game_id, 1, "a1b2")
    persist = h.pending[0]
    h.commit()
    with pytest.raises(ValueError):
        h.hub.persisted(persist.token, h.now)
    assert isinstance(persist, Persist)


def test_the_first_move_window_is_in_the_snapshot_and_the_opening_moves() -> None:
    """``first_move_ms``: what is left of the side to move's first-move window (the snapshot),
    the whole window armed by the game's first move (its event), null once both have moved."""
    h = Harness(HubConfig(room=RoomSettings(first_move_window_ms=20_000)))
    game_id = start_game(h)
    h.advance(5_000)
    h.send(2, "join", game=game_id, ack=1)
    assert one(h.inbox(2), "game").d["first_move_ms"] == 15_000
    h.clear()
    move(h, 1, game_id, 1, "a1b2")
    assert one(h.inbox(2), "move").d["first_move_ms"] == 20_000
    h.clear()
    move(h, 2, game_id, 2, "a5a2")
    assert one(h.inbox(1), "move").d["first_move_ms"] is None
    h.send(1, "join", game=game_id, ack=2)
    assert one(h.inbox(1), "game").d["first_move_ms"] is None

"""Hub game rooms with the real engine, their clocks: the clock starts after both first
moves, the flag falls exactly at the deadline (by a tick or by a late move), byoyomi periods,
lag compensation within the quota. Manual clock, no event loop (the clock itself:
test_hub_clock.py).
"""

from hub_harness import Harness, move, one, play_line, room_of, start_game

from server.hub.effects import GameFinished, MoveAppended


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

"""Hub game rooms with the real engine, how a game ends: checkmate, repetition, resignation,
the first-move window and abort, draw offers and claims refused in shogi variants, and
abandonment (the countdown, win or draw claims, a returning player). Manual clock, no event
loop. (Whether an ending's write is awaited: test_hub_endings.py.)
"""

from hub_harness import (
    MATE_LINE,
    REPETITION_LINE,
    START,
    Harness,
    move,
    one,
    play_line,
    player,
    room_of,
    start_game,
    unchanged_after,
)

from server.hub.effects import GameFinished
from server.hub.hub import HubConfig
from server.hub.room import RoomSettings

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

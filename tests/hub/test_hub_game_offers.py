"""Hub game rooms with the real engine, takebacks and rematches: a takeback removes one or
two moves once stored, is refused where it cannot apply, cancelled by a move, undone by a
failed write; a rematch swaps colours and needs the opponent online. Manual clock, no event
loop.
"""

from hub_harness import Harness, move, one, play_line, room_of, start_game, unchanged_after

from server.hub.effects import MovesRetracted


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

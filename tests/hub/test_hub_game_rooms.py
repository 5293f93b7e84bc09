"""Hub game rooms with the real engine, a room's life around its game: a failed creation frees
both players, the start waits for absent players, persist tokens are reported once, the
first-move window is shown, finished rooms are evicted after their TTL. Manual clock, no
event loop.
"""

import pytest
from hub_harness import FISCHER_TC, Harness, move, one, player, room_of, start_game

from server.hub.effects import Persist
from server.hub.hub import HubConfig
from server.hub.room import RoomSettings


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

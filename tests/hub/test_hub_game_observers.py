"""Hub game rooms with the real engine, who sees what: observers get a snapshot and the
players' stream, players and spectators chat apart, a reconnecting client gets the missed
events replayed (spectators without the players' chat) or a snapshot when too far behind.
Manual clock, no event loop.
"""

from hub_harness import Harness, move, one, only, play_line, player, room_of, start_game

from server.hub.hub import HubConfig
from server.hub.room import RoomSettings


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

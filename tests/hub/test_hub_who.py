"""Hub lobby: the ``who`` listing of online players. Manual clock."""

import pytest
from hub_harness import Harness, one, player, start_game

from server.hub.commands import WhoCommand, parse_command
from server.hub.errors import ProtocolError


def test_who_parses_and_rejects_fields() -> None:
    assert parse_command({"t": "who", "a": 3}) == WhoCommand(ack=3)
    with pytest.raises(ProtocolError, match="unknown field"):
        parse_command({"t": "who", "d": {"watch": True}})


def test_who_lists_online_players_with_ratings_and_games() -> None:
    h = Harness()
    game_id = start_game(h, first=player("alice", 1720.0), second=player("bob"))
    h.connect(3, player("carol", guest=True))
    h.send(3, "who", ack="w")
    listing = one(h.inbox(3), "who")
    assert listing.a == "w"
    assert listing.d == {
        "players": [
            {
                "id": "alice",
                "name": "Alice",
                "guest": False,
                "ratings": {"minishogi": {"rating": 1720, "provisional": False}},
                "game": game_id,
            },
            {
                "id": "bob",
                "name": "Bob",
                "guest": False,
                "ratings": {"minishogi": {"rating": 1500, "provisional": False}},
                "game": game_id,
            },
            {"id": "carol", "name": "Carol", "guest": True, "ratings": {}, "game": None},
        ]
    }


def test_who_forgets_players_after_their_last_connection_closes() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(11, player("alice"))
    h.connect(2, player("bob"))
    h.disconnect(1)
    h.send(2, "who")
    assert [p["id"] for p in one(h.inbox(2), "who").d["players"]] == ["alice", "bob"]
    h.disconnect(11)
    h.send(2, "who")
    assert [p["id"] for p in one(h.inbox(2), "who").d["players"]] == ["bob"]

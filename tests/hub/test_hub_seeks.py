"""Hub lobby: seeks, instant pairing, sought subscription, play, challenges. Manual clock."""

from typing import Any

import pytest
from hub_harness import FISCHER_TC, Harness, one, only, player

from server.hub.effects import GameCreated
from server.hub.hub import HubConfig
from server.hub.identity import PlayerInfo

BYOYOMI_TC = {"kind": "byoyomi", "main_s": 60, "period_s": 10, "periods": 2}


def seek(h: Harness, conn: int, ack: Any = None, **overrides: Any) -> None:
    fields: dict[str, Any] = {"variant": "minishogi", "tc": FISCHER_TC, **overrides}
    h.send(conn, "seek", ack=ack, **fields)


def test_seek_is_posted_and_acknowledged_with_its_id() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(3, player("carol"))
    h.send(3, "sought", watch=True)
    h.clear()
    seek(h, 1, ack=10)
    ack = one(h.inbox(1), "ack")
    assert ack.a == 10 and ack.d == {"seek": 1}
    added = one(h.inbox(3), "seek_added")
    assert added.d["id"] == 1 and added.d["player"]["name"] == "Alice"
    assert [s.id for s in h.hub.seeks()] == [1]


def test_fitting_seek_pairs_at_once_instead_of_being_posted() -> None:
    h = Harness(auto_commit=False)
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    h.connect(3, player("carol"))
    h.send(3, "sought", watch=True)
    seek(h, 1, colour="second")
    h.clear()
    seek(h, 2, ack="s")
    assert one(h.inbox(3), "seek_removed").d == {"id": 1}
    ack = one(h.inbox(2), "ack")
    game_id = ack.d["game"]
    assert h.hub.seeks() == []
    # The game row must be stored before anyone is told the game started.
    assert len(h.pending) == 1
    record = h.pending[0].record
    assert isinstance(record, GameCreated) and record.game_id == game_id
    assert (record.first.player_id, record.second.player_id) == ("bob", "alice")
    assert only(h.inbox(1), "game_start") == []
    h.commit()
    start = one(h.inbox(1), "game_start")
    assert start.d["side"] == "second" and start.d["opponent"]["name"] == "Bob"
    snapshot = one(h.inbox(2), "game")
    assert snapshot.d["role"] == "first" and snapshot.d["status"] == "started"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"rated": True}, {"rated": False}),
        ({"colour": "first"}, {"colour": "first"}),
        ({"tc": {**FISCHER_TC, "inc_s": 2}}, {}),
        ({"variant": "shoshogi"}, {}),
        ({"range": [1600, 2000]}, {}),
        ({}, {"range": [1000, 1400]}),
        ({"manual": True}, {}),
    ],
)
def test_seeks_that_do_not_fit_are_both_posted(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    seek(h, 1, **first)
    seek(h, 2, **second)
    assert len(h.hub.seeks()) == 2
    assert h.hub.active_game("alice") is None


def test_mutual_rating_ranges_pair() -> None:
    h = Harness()
    h.connect(1, player("alice", 1800))
    h.connect(2, player("bob", 1450))
    seek(h, 1, range=[1400, 1500], rated=True)
    seek(h, 2, range=[1700, 1900], rated=True)
    assert h.hub.active_game("alice") == h.hub.active_game("bob") is not None


def test_seek_limit_is_three_and_refusal_changes_nothing() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    for base in (60, 120, 180):
        seek(h, 1, tc={**FISCHER_TC, "base_s": base})
    h.clear()
    seek(h, 1, ack=4, tc={**FISCHER_TC, "base_s": 240})
    error = one(h.inbox(1), "error")
    assert error.d["code"] == "seek_limit" and error.a == 4
    assert len(h.hub.seeks()) == 3


def test_guest_cannot_seek_rated_but_may_seek_casual() -> None:
    h = Harness()
    h.connect(1, player("guest1", guest=True))
    seek(h, 1, rated=True)
    assert one(h.inbox(1), "error").d["code"] == "guests_casual_only"
    seek(h, 1)
    assert one(h.inbox(1), "ack").d == {"seek": 1}


def test_unknown_variant_is_refused() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    seek(h, 1, variant="tictactoe")
    error = one(h.inbox(1), "error")
    assert error.d["code"] == "unknown_variant" and "minishogi" in error.d["message"]
    assert h.hub.seeks() == []


def test_byoyomi_is_accepted_for_shogi_variants() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    seek(h, 1, tc=BYOYOMI_TC)
    assert one(h.inbox(1), "ack").d == {"seek": 1}
    assert h.hub.seeks()[0].view()["tc"] == BYOYOMI_TC


def test_byoyomi_is_refused_for_chess_variants() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    seek(h, 1, variant="wildcastle", tc=BYOYOMI_TC)
    assert one(h.inbox(1), "error").d["code"] == "byoyomi_unavailable"
    assert h.hub.seeks() == []


def test_unseek_one_and_all() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    for base in (60, 120, 180):
        seek(h, 1, tc={**FISCHER_TC, "base_s": base})
    h.clear()
    h.send(2, "unseek", id=1)
    assert one(h.inbox(2), "error").d["code"] == "no_such_seek"
    h.send(1, "unseek", id=2)
    assert one(h.inbox(1), "ack").d == {"removed": [2]}
    h.send(1, "unseek")
    assert one(h.inbox(1), "ack").d == {"removed": [1, 3]}
    assert h.hub.seeks() == []


def test_sought_lists_and_watch_subscription() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    seek(h, 1)
    h.send(2, "sought", ack=1)
    listing = one(h.inbox(2), "sought")
    assert listing.a == 1 and [s["id"] for s in listing.d["seeks"]] == [1]
    assert listing.d["watching"] is False
    seek(h, 1, tc={**FISCHER_TC, "base_s": 90})
    assert only(h.inbox(2), "seek_added") == []
    h.send(2, "sought", watch=True)
    h.inbox(2)
    h.send(1, "unseek", id=1)
    assert one(h.inbox(2), "seek_removed").d == {"id": 1}
    h.send(2, "sought", watch=False)
    h.inbox(2)
    h.send(1, "unseek")
    assert h.inbox(2) == []


def test_seeks_vanish_when_the_player_disconnects() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(11, player("alice"))  # a second tab
    h.connect(2, player("bob"))
    h.send(2, "sought", watch=True)
    seek(h, 1)
    h.disconnect(1)
    assert len(h.hub.seeks()) == 1  # alice is still connected on 11
    h.clear()
    h.disconnect(11)
    assert h.hub.seeks() == []
    assert one(h.inbox(2), "seek_removed").d == {"id": 1}


def test_seeks_vanish_when_the_player_starts_a_game() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    seek(h, 1, variant="shoshogi")
    seek(h, 1, colour="first")
    seek(h, 2, colour="second")
    assert h.hub.seeks() == []


def test_play_accepts_a_seek() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    seek(h, 1, colour="first")
    h.clear()
    h.send(2, "play", ack=5, id=1)
    game_id = one(h.inbox(2), "ack").d["game"]
    room = h.hub.room(game_id)
    assert room is not None and [p.id for p in room.players] == ["alice", "bob"]
    assert h.hub.seeks() == []


def test_play_refusals() -> None:
    h = Harness()
    h.connect(1, player("alice", 1500))
    h.connect(2, player("bob", 1900))
    h.connect(3, player("guest3", guest=True))
    seek(h, 1, rated=True, range=[1300, 1700])
    h.clear()
    h.send(1, "play", id=1)
    assert one(h.inbox(1), "error").d["code"] == "own_seek"
    h.send(2, "play", id=1)
    assert one(h.inbox(2), "error").d["code"] == "rating_out_of_range"
    h.send(3, "play", id=1)
    assert one(h.inbox(3), "error").d["code"] == "guests_casual_only"
    h.send(2, "play", id=99)
    assert one(h.inbox(2), "error").d["code"] == "no_such_seek"
    assert len(h.hub.seeks()) == 1 and h.hub.active_game("alice") is None


def test_play_on_manual_seek_sends_a_challenge_to_its_owner() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    seek(h, 1, manual=True, colour="second")
    h.clear()
    h.send(2, "play", id=1)
    challenge_id = one(h.inbox(2), "ack").d["challenge"]
    incoming = one(h.inbox(1), "challenge")
    assert incoming.d["from"]["id"] == "bob" and incoming.d["colour"] == "first"
    assert incoming.d["seek"] == 1
    h.send(1, "accept", id=challenge_id)
    game_id = h.hub.active_game("alice")
    room = h.hub.room(game_id or "")
    assert room is not None and [p.id for p in room.players] == ["bob", "alice"]
    assert h.hub.seeks() == []


def test_already_playing_cannot_seek() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    seek(h, 1)
    seek(h, 2)
    h.clear()
    seek(h, 1)
    assert one(h.inbox(1), "error").d["code"] == "already_playing"


# --- challenges ---------------------------------------------------------------------------------


def match(h: Harness, conn: int, to: str, ack: Any = None, **overrides: Any) -> None:
    fields: dict[str, Any] = {"to": to, "variant": "minishogi", "tc": FISCHER_TC, **overrides}
    h.send(conn, "match", ack=ack, **fields)


def test_match_then_accept_starts_a_game() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    match(h, 1, "BOB", ack=1, colour="second")
    challenge_id = one(h.inbox(1), "ack").d["challenge"]
    incoming = one(h.inbox(2), "challenge")
    assert incoming.d["id"] == challenge_id and incoming.d["to"]["id"] == "bob"
    h.send(2, "accept", ack=2, id=challenge_id)
    game_id = one(h.inbox(2), "ack").d["game"]
    assert one(h.inbox(1), "challenge_accepted").d == {"id": challenge_id, "game": game_id}
    room = h.hub.room(game_id)
    assert room is not None and [p.id for p in room.players] == ["bob", "alice"]
    assert h.hub.challenge(challenge_id) is None


def test_decline_with_reason_and_withdraw() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    match(h, 1, "bob")
    h.clear()
    h.send(2, "decline", id=1, reason="later")
    assert one(h.inbox(1), "challenge_declined").d == {"id": 1, "reason": "later"}
    match(h, 1, "bob")
    h.clear()
    h.send(2, "withdraw", id=2)
    assert one(h.inbox(2), "error").d["code"] == "no_such_challenge"
    h.send(1, "accept", id=2)
    assert one(h.inbox(1), "error").d["code"] == "no_such_challenge"
    h.send(1, "withdraw", id=2)
    assert one(h.inbox(2), "challenge_withdrawn").d == {"id": 2}
    assert h.hub.challenge(2) is None


def test_match_refusals_change_nothing() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("guest2", guest=True))
    match(h, 1, "nobody")
    assert one(h.inbox(1), "error").d["code"] == "no_such_player"
    match(h, 1, "alice")
    assert one(h.inbox(1), "error").d["code"] == "self_challenge"
    match(h, 1, "guest2", rated=True)
    assert one(h.inbox(1), "error").d["code"] == "guests_casual_only"
    match(h, 1, "guest2")
    assert one(h.inbox(1), "ack").d == {"challenge": 1}
    match(h, 1, "guest2")
    assert one(h.inbox(1), "error").d["code"] == "challenge_exists"


def test_challenge_limit() -> None:
    h = Harness(HubConfig(max_challenges_per_player=2))
    h.connect(1, player("alice"))
    for conn, name in ((2, "bob"), (3, "carol"), (4, "dave")):
        h.connect(conn, player(name))
    match(h, 1, "bob")
    match(h, 1, "carol")
    h.clear()
    match(h, 1, "dave")
    assert one(h.inbox(1), "error").d["code"] == "challenge_limit"
    assert h.inbox(4) == []


def test_challenges_are_cancelled_when_a_party_goes_offline() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    match(h, 1, "bob")
    h.clear()
    h.disconnect(2)
    assert one(h.inbox(1), "challenge_cancelled").d == {"id": 1, "reason": "offline"}
    assert h.hub.challenge(1) is None


def test_challenge_to_a_playing_player_is_refused() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    h.connect(3, player("carol"))
    seek(h, 1)
    seek(h, 2)
    h.clear()
    match(h, 3, "alice")
    assert one(h.inbox(3), "error").d["code"] == "player_busy"


def test_hello_lists_open_seeks_and_challenges() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    seek(h, 1)
    match(h, 2, "alice")
    h.connect(5, player("alice"))
    hello = one(h.inbox(5), "hello")
    assert [s["id"] for s in hello.d["seeks"]] == [1]
    assert [c["id"] for c in hello.d["challenges"]] == [1]
    assert hello.d["game"] is None


def test_connection_limit_closes_the_oldest() -> None:
    h = Harness(HubConfig(max_connections_per_player=2))
    for conn in (1, 2, 3):
        h.connect(conn, player("alice"))
    assert [c.conn_id for c in h.closed] == [1]
    h.disconnect(1)  # the adapter reports the close: ignored
    assert h.hub.online("alice")


def test_a_name_two_players_share_stays_the_first_ones() -> None:
    """Two guests who drew one name (the accounts make it next to impossible): the name index
    keeps the first, so a challenge by name reaches one player, never the newcomer; the
    newcomer leaving does not take the name from the first."""
    h = Harness()
    first, second = PlayerInfo("g1", "Guest-abc", True), PlayerInfo("g2", "guest-ABC", True)
    h.connect(1, player("alice"))
    h.connect(2, first)
    h.connect(3, second)
    match(h, 1, "guest-abc", ack=1)
    assert one(h.inbox(2), "challenge").d["to"]["id"] == "g1"
    assert h.of_type(3, "challenge") == []
    names = h.hub.state.names
    assert names["guest-abc"] == "g1"
    h.disconnect(3)
    assert names["guest-abc"] == "g1"
    h.disconnect(2)
    assert "guest-abc" not in names

"""A correspondence game's turn told to its players (server/hub/turns.py): ``my_game`` to every
connection of both players and one ``TurnChanged`` after each stored start, move and end; a
real-time game sends neither (manual clock, no event loop)."""

from __future__ import annotations

from hub_harness import FISCHER_TC, Harness, only, player

from server.hub.effects import Effect, TurnChanged

DAYS = {"kind": "correspondence", "days": 3}


def _changes(effects: list[Effect]) -> list[TurnChanged]:
    return [e for e in effects if isinstance(e, TurnChanged)]


def _start(h: Harness, tc: dict[str, object]) -> tuple[str, list[Effect]]:
    """alice (conn 1) challenges bob (conns 2 and 3) as the first player; bob accepts. Returns
    the game and the effects of the stored creation."""
    h.send(1, "match", to="Bob", variant="minishogi", tc=tc, colour="first", ack="m")
    h.commit_offers()  # a correspondence challenge is answered once stored
    challenge = only(h.inbox(1), "ack")[0].d["challenge"]
    h.send(2, "accept", id=challenge, ack="a")
    game_id = str(only(h.inbox(2), "ack")[0].d["game"])
    effects = h.commit()
    h.commit_all()
    return game_id, effects


def test_start_moves_and_end_of_a_correspondence_game_are_told() -> None:
    h = Harness(auto_commit=False)
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    h.connect(3, player("bob"))  # bob's second tab
    h.clear()
    game_id, effects = _start(h, DAYS)
    assert _changes(effects) == [
        TurnChanged(
            game_id, "minishogi", ("alice", "bob"), ("Alice", "Bob"), "alice", 0, False, None
        )
    ]
    mine = only(h.inbox(1), "my_game")[-1].d
    assert (mine["your_turn"], mine["side"], mine["opponent"], mine["plies"]) == (
        True,
        "first",
        "Bob",
        0,
    )
    assert mine["tc"] == DAYS and mine["speed"] == "correspondence"
    for conn in (2, 3):
        assert only(h.inbox(conn), "my_game")[-1].d["your_turn"] is False
    h.clear()

    h.send(1, "move", game=game_id, ply=1, move="a1b2", ack="x")
    effects = h.commit()
    [change] = _changes(effects)
    assert (change.to_move, change.plies, change.finished) == ("bob", 1, False)
    for conn in (2, 3):
        told = only(h.inbox(conn), "my_game")
        assert [m.d["your_turn"] for m in told] == [True]
    assert only(h.inbox(1), "my_game")[0].d["your_turn"] is False
    h.clear()

    h.send(2, "resign", game=game_id, ack="r")
    effects = h.commit()
    [change] = _changes(effects)
    assert (change.to_move, change.finished, change.result) == (None, True, "1-0")
    ended = only(h.inbox(1), "my_game")[0].d
    assert (ended["finished"], ended["your_turn"], ended["result"]) == (True, False, "1-0")


def test_a_real_time_game_tells_nothing() -> None:
    h = Harness(auto_commit=False)
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    h.clear()
    game_id, effects = _start(h, FISCHER_TC)
    h.send(1, "move", game=game_id, ply=1, move="a1b2", ack="x")
    effects += h.commit()
    assert _changes(effects) == []
    assert only(h.inbox(1), "my_game") == only(h.inbox(2), "my_game") == []

"""The hub's side of playing the computer: ``challenge_ai`` starts a casual game at once with
the computer player (``PlayerInfo.computer``), who may play any number of games at once."""

from __future__ import annotations

from hub_harness import FISCHER_TC, Harness, one, player, room_of

from server.hub.identity import PlayerInfo
from server.hub.messages import Message

COMPUTER = PlayerInfo("computer", "Computer", computer=True)
BYOYOMI = {"kind": "byoyomi", "main_s": 60, "period_s": 10, "periods": 1}


def kinds(messages: list[Message]) -> list[str]:
    return [m.t for m in messages]


def test_challenge_ai_starts_a_casual_game_with_the_computer_at_once() -> None:
    h = Harness()
    h.connect(9, COMPUTER)
    h.connect(1, player("alice"))
    h.inbox(9), h.inbox(1)
    h.send(1, "challenge_ai", ack=5, variant="minishogi", level=3, tc=FISCHER_TC, colour="second")
    to_computer = h.inbox(9)
    assert to_computer[0].t == "computer_game"
    game_id = to_computer[0].d["game"]
    assert to_computer[0].d == {"game": game_id, "level": 3}
    assert kinds(to_computer[1:3]) == ["game_start", "game"]
    assert to_computer[1].d["side"] == "first"  # alice asked for second
    assert to_computer[2].d["rated"] is False
    to_alice = h.inbox(1)
    assert to_alice[0].t == "ack" and to_alice[0].d == {"game": game_id}
    start = next(m for m in to_alice if m.t == "game_start")
    assert start.d["side"] == "second"
    assert start.d["opponent"]["computer"] is True and start.d["opponent"]["name"] == "Computer"
    assert h.hub.active_game("alice") == game_id
    assert h.hub.active_game("computer") is None  # never "busy"


def test_the_computer_plays_several_games_at_once() -> None:
    h = Harness()
    h.connect(9, COMPUTER)
    games = set()
    for conn, name in ((1, "alice"), (2, "bob"), (3, "carol")):
        h.connect(conn, player(name))
        h.send(conn, "challenge_ai", ack=1, variant="spartan", level=1, tc=FISCHER_TC)
        (ack,) = [m for m in h.inbox(conn) if m.t == "ack"]
        games.add(ack.d["game"])
    assert len(games) == 3
    started = [m.d["game"] for m in h.inbox(9) if m.t == "game_start"]
    assert set(started) == games


def test_challenge_ai_refusals() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.send(1, "challenge_ai", ack=1, variant="minishogi", level=1, tc=FISCHER_TC)
    assert h.inbox(1)[-1].d["code"] == "computer_unavailable"
    h.connect(9, COMPUTER)
    h.send(1, "challenge_ai", ack=2, variant="spartan", level=1, tc=BYOYOMI)
    assert h.inbox(1)[-1].d["code"] == "byoyomi_unavailable"
    h.send(9, "challenge_ai", ack=3, variant="spartan", level=1, tc=FISCHER_TC)
    assert h.inbox(9)[-1].d["code"] == "self_challenge"
    h.send(1, "challenge_ai", ack=4, variant="minishogi", level=1, tc=BYOYOMI)
    h.inbox(1)
    h.send(1, "challenge_ai", ack=5, variant="minishogi", level=1, tc=BYOYOMI)
    assert h.inbox(1)[-1].d["code"] == "already_playing"


def _game_against_computer(h: Harness, colour: str) -> str:
    """alice (conn 1) against the computer (conn 9), alice playing ``colour``."""
    h.connect(9, COMPUTER)
    h.connect(1, player("alice"))
    h.send(1, "challenge_ai", ack=1, variant="minishogi", level=8, tc=FISCHER_TC, colour=colour)
    (ack,) = [m for m in h.inbox(1) if m.t == "ack"]
    h.clear()
    return str(ack.d["game"])


def test_the_computers_first_move_has_its_own_window_and_the_players_theirs() -> None:
    h = Harness()
    game_id = _game_against_computer(h, "second")  # the computer moves first
    room = room_of(h, game_id)
    window = room.state.settings.computer_first_move_window_ms
    assert window > room.state.settings.first_move_window_ms
    assert h.hub.next_deadline() == h.now + window
    h.tick(h.now + 60_000)  # twice a player's window: the computer's game goes on
    assert room.termination is None and not h.inbox(1)
    h.send(9, "move", ack="c1", game=game_id, ply=1, move="a1b2")
    assert room.termination is None and len(room.records) == 1
    # alice's own first move has a player's window, from the computer's move
    assert h.hub.next_deadline() == h.now + room.state.settings.first_move_window_ms
    h.tick(h.now + room.state.settings.first_move_window_ms)
    assert room.termination == "abort"
    assert one(h.inbox(1), "end").d["detail"] == "no_first_move"


def test_the_computer_moving_second_has_its_window_after_the_first_move() -> None:
    h = Harness()
    game_id = _game_against_computer(h, "first")
    room = room_of(h, game_id)
    settings = room.state.settings
    assert h.hub.next_deadline() == h.now + settings.first_move_window_ms
    h.advance(1000)
    h.send(1, "move", ack=1, game=game_id, ply=1, move="a1b2")
    assert h.hub.next_deadline() == h.now + settings.computer_first_move_window_ms
    h.tick(h.now + settings.computer_first_move_window_ms - 1)
    assert room.termination is None
    h.tick(h.now + 1)  # a computer with no worker left: the game still ends
    assert room.termination == "abort"
    assert one(h.inbox(1), "end").d["detail"] == "no_first_move"

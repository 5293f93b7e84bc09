"""The hub's side of playing the computer: ``challenge_ai`` starts a casual game at once with
the computer player (``PlayerInfo.computer``), who may play any number of games at once."""

from __future__ import annotations

from hub_harness import FISCHER_TC, Harness, player

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

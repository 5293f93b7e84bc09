"""What nodes send each other (server/cluster/wire.py, lobby.py): pure functions, no I/O.
The envelopes themselves: test_cluster_envelopes.py."""

from __future__ import annotations

import json

import pytest

from server.cluster.lobby import listed_from_payload, registry_payload
from server.cluster.wire import command_game, command_to_frame, player_from_json, player_to_json
from server.hub.commands import COMMAND_TYPES, parse_command, time_control_from_json
from server.hub.identity import PlayerInfo, Rating
from server.hub.lobby import GameTerms, Seek, seeks_fit
from server.rules.time_control import Byoyomi, Fischer

FISCHER = {"kind": "fischer", "base_s": 180, "inc_s": 2}
BYOYOMI = {"kind": "byoyomi", "main_s": 300, "period_s": 10, "periods": 3}

FRAMES = [
    {"t": "seek", "d": {"variant": "minishogi", "tc": BYOYOMI}},
    {
        "t": "seek",
        "d": {
            "variant": "spartan",
            "tc": FISCHER,
            "rated": True,
            "colour": "second",
            "range": [1400, 1800],
            "manual": True,
        },
    },
    {"t": "unseek"},
    {"t": "unseek", "d": {"id": 2**40 + 7}},
    {"t": "sought"},
    {"t": "sought", "d": {"watch": False}},
    {"t": "who"},
    {"t": "play", "d": {"id": 3}},
    {"t": "match", "d": {"to": "Bob", "variant": "wildcastle", "tc": FISCHER, "colour": "first"}},
    {"t": "challenge_ai", "d": {"variant": "daishogi", "level": 8, "tc": FISCHER, "colour": "second"}},
    {"t": "accept", "d": {"id": 4}},
    {"t": "decline", "d": {"id": 4}},
    {"t": "decline", "d": {"id": 4, "reason": "later"}},
    {"t": "withdraw", "d": {"id": 4}},
    {"t": "join", "d": {"game": "u8jzPde0"}},
    {"t": "join", "d": {"game": "u8jzPde0", "v": 1795361832612}},
    {"t": "leave", "d": {"game": "u8jzPde0"}},
    {"t": "move", "d": {"game": "u8jzPde0", "ply": 3, "move": "h3i4,i4i5"}},
    {"t": "resign", "d": {"game": "g"}},
    {"t": "abort", "d": {"game": "g"}},
    {"t": "claim_draw", "d": {"game": "g"}},
    {"t": "abandon_claim", "d": {"game": "g", "outcome": "draw"}},
    {"t": "chat", "d": {"game": "g", "text": "good luck, \u00e9t\u00e9 \U0001f600"}},
    {"t": "berserk", "d": {"game": "g"}},
    {"t": "premoves", "d": {"game": "g", "lines": [["c5c4", "c1c2", "b5a4", "b1c1"], ["h3i4,i4i5", "P@c3"]]}},
    {"t": "premoves_clear", "d": {"game": "g"}},
    {"t": "premove_line", "d": {"game": "g", "moves": []}},
    {"t": "premove_line", "d": {"game": "g", "moves": ["c5c4", "h3i4,i4i5", "P@c3"]}},
    *({"t": f"{k}_{a}", "d": {"game": "g"}} for k in ("draw", "takeback", "rematch")
      for a in ("offer", "accept", "decline")),
]  # fmt: skip


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f["t"])
def test_a_command_travels_as_the_frame_it_came_from(frame: dict[str, object]) -> None:
    command = parse_command({**frame, "a": 5})
    sent = command_to_frame(command, ack="~12")
    assert parse_command(sent) == parse_command({**frame, "a": "~12"})
    assert sent["a"] == "~12"
    assert json.loads(json.dumps(sent)) == sent
    assert command_game(command) == (frame.get("d") or {}).get("game")  # type: ignore[attr-defined]


def test_every_command_type_is_covered() -> None:
    assert {frame["t"] for frame in FRAMES} == COMMAND_TYPES


def test_a_player_travels_with_all_ratings() -> None:
    player = PlayerInfo(
        "u7",
        "Alice",
        False,
        {("minishogi", "blitz"): Rating(1623.5, 80.25, 0.059), "spartan": Rating(1400.0)},
    )
    assert player_from_json(json.loads(json.dumps(player_to_json(player)))) == player
    computer = PlayerInfo("computer", "Computer", computer=True)
    assert player_from_json(json.loads(json.dumps(player_to_json(computer)))) == computer
    for bad in ({}, {"id": 1, "name": "x", "guest": False, "ratings": []}, "x"):
        with pytest.raises(ValueError):
            player_from_json(bad)


def test_a_listed_seek_pairs_like_the_hubs_own() -> None:
    rated = {("minishogi", "rapid"): Rating(1712.4)}
    terms = GameTerms("minishogi", Byoyomi.from_seconds(300, 10, 3), True)
    waiting = Seek(
        2**33 + 1, PlayerInfo("u1", "a", False, rated), terms, "first", (1500, 1800), False, 5
    )
    listed = listed_from_payload(registry_payload(waiting, "hub2"))
    assert listed.node == "hub2" and listed.view == waiting.view()
    assert listed.seek.rating == pytest.approx(waiting.rating)
    strong = PlayerInfo("u2", "b", False, {("minishogi", "rapid"): Rating(1900.0)})
    fitting = PlayerInfo("u3", "c", False, {("minishogi", "rapid"): Rating(1650.0)})
    for newcomer, colour, fits in (
        (fitting, "random", True),
        (fitting, "first", False),  # both want to move first
        (strong, "second", False),  # outside the waiting seek's range
    ):
        seek = Seek(0, newcomer, terms, colour, None, False, 0)  # type: ignore[arg-type]
        assert seeks_fit(listed.seek, seek) == seeks_fit(waiting, seek) == fits
    with pytest.raises(ValueError):
        listed_from_payload('{"node": "x"}')


def test_time_controls_from_views() -> None:
    assert time_control_from_json(FISCHER) == Fischer.from_seconds(180, 2)
    assert time_control_from_json(BYOYOMI) == Byoyomi.from_seconds(300, 10, 3)
    with pytest.raises(ValueError):
        time_control_from_json({"kind": "hourglass"})

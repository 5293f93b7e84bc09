"""parse_command: every command type and the errors for malformed frames."""

from typing import Any

import pytest

from server.hub.commands import (
    COMMAND_TYPES,
    AbandonClaimCommand,
    AcceptCommand,
    ChallengeAiCommand,
    ChatCommand,
    DeclineCommand,
    JoinCommand,
    MatchCommand,
    MoveCommand,
    OfferCommand,
    PlayCommand,
    SeekCommand,
    SoughtCommand,
    UnseekCommand,
    ack_of,
    parse_command,
)
from server.hub.errors import ProtocolError
from server.rules.time_control import Byoyomi, Fischer

FISCHER = {"kind": "fischer", "base_s": 180, "inc_s": 2}


def test_seek_with_all_fields() -> None:
    command = parse_command(
        {
            "t": "seek",
            "d": {
                "variant": "minishogi",
                "tc": {"kind": "byoyomi", "main_s": 300, "period_s": 10, "periods": 3},
                "rated": True,
                "colour": "second",
                "range": [1400, 1700],
                "manual": True,
            },
            "a": 4,
        }
    )
    assert command == SeekCommand(
        "minishogi", Byoyomi(300_000, 10_000, 3), True, "second", (1400, 1700), True, ack=4
    )


def test_seek_defaults() -> None:
    command = parse_command({"t": "seek", "d": {"variant": "spartan", "tc": FISCHER}})
    assert command == SeekCommand("spartan", Fischer(180_000, 2_000))


def test_simple_commands() -> None:
    assert parse_command({"t": "unseek"}) == UnseekCommand(None)
    assert parse_command({"t": "unseek", "d": {"id": 3}}) == UnseekCommand(3)
    assert parse_command({"t": "sought", "d": {"watch": True}}) == SoughtCommand(True)
    assert parse_command({"t": "play", "d": {"id": 7}, "a": "x"}) == PlayCommand(7, ack="x")
    assert parse_command({"t": "accept", "d": {"id": 2}}) == AcceptCommand(2)
    assert parse_command({"t": "decline", "d": {"id": 2, "reason": "later"}}) == DeclineCommand(
        2, "later"
    )
    assert parse_command({"t": "join", "d": {"game": "g", "v": 12}}) == JoinCommand("g", 12)
    assert parse_command({"t": "chat", "d": {"game": "g", "text": "hi"}}) == ChatCommand("g", "hi")
    assert parse_command(
        {"t": "abandon_claim", "d": {"game": "g", "outcome": "draw"}}
    ) == AbandonClaimCommand("g", "draw")


def test_match() -> None:
    command = parse_command(
        {
            "t": "match",
            "d": {"to": "Alice", "variant": "wildcastle", "tc": FISCHER, "colour": "first"},
        }
    )
    assert command == MatchCommand("Alice", "wildcastle", Fischer(180_000, 2_000), False, "first")


def test_challenge_ai() -> None:
    command = parse_command(
        {"t": "challenge_ai", "d": {"variant": "daishogi", "level": 8, "tc": FISCHER}, "a": 3}
    )
    assert command == ChallengeAiCommand("daishogi", 8, Fischer(180_000, 2_000), "random", ack=3)
    for level in (0, 9, "1", None, True):
        with pytest.raises(ProtocolError, match="level"):
            parse_command(
                {"t": "challenge_ai", "d": {"variant": "minishogi", "level": level, "tc": FISCHER}}
            )


def test_move() -> None:
    command = parse_command({"t": "move", "d": {"game": "abc", "ply": 1, "move": "P@c3"}, "a": 1})
    assert command == MoveCommand("abc", 1, "P@c3", ack=1)


@pytest.mark.parametrize("kind", ["draw", "takeback", "rematch"])
@pytest.mark.parametrize("action", ["offer", "accept", "decline"])
def test_offer_commands(kind: str, action: str) -> None:
    command = parse_command({"t": f"{kind}_{action}", "d": {"game": "g"}})
    assert command == OfferCommand("g", kind, action)  # type: ignore[arg-type]


def test_every_type_is_listed() -> None:
    assert "move" in COMMAND_TYPES and "rematch_decline" in COMMAND_TYPES and "who" in COMMAND_TYPES
    assert len(COMMAND_TYPES) == 31  # berserk, premoves, premoves_clear, premove_line included


@pytest.mark.parametrize(
    ("frame", "fragment"),
    [
        ([], "JSON object"),
        ({"d": {}}, "'t'"),
        ({"t": 5}, "'t'"),
        ({"t": "fly"}, "unknown command type 'fly'"),
        ({"t": "play"}, "missing field 'id'"),
        ({"t": "play", "d": {"id": "7"}}, "'id' must be an integer"),
        ({"t": "play", "d": {"id": True}}, "'id' must be an integer"),
        ({"t": "play", "d": {"id": 0}}, "between"),
        ({"t": "play", "d": {"id": 1, "colour": "first"}}, "unknown field(s) 'colour'"),
        ({"t": "play", "d": [1]}, "'d' must be an object"),
        ({"t": "play", "d": {"id": 1}, "x": 1}, "unknown frame key(s) 'x'"),
        ({"t": "play", "d": {"id": 1}, "a": 1.5}, "ack id"),
        ({"t": "play", "d": {"id": 1}, "a": ""}, "ack id"),
        ({"t": "move", "d": {"game": "g", "ply": 0, "move": "a1a2"}}, "'ply'"),
        ({"t": "move", "d": {"game": "g", "ply": 1, "move": ""}}, "'move'"),
        ({"t": "move", "d": {"game": "", "ply": 1, "move": "a1a2"}}, "'game'"),
        ({"t": "seek", "d": {"variant": "x"}}, "missing field 'tc'"),
        ({"t": "seek", "d": {"variant": "x", "tc": 5}}, "'tc' must be an object"),
        ({"t": "seek", "d": {"variant": "x", "tc": {"kind": "hourglass"}}}, "'kind'"),
        ({"t": "seek", "d": {"variant": "x", "tc": {"kind": "fischer", "base_s": 60}}}, "'inc_s'"),
        (
            {"t": "seek", "d": {"variant": "x", "tc": {**FISCHER, "periods": 1}}},
            "seek.tc: unknown field(s) 'periods'",
        ),
        ({"t": "seek", "d": {"variant": "x", "tc": {**FISCHER, "base_s": 5}}}, "'base_s'"),
        (
            {
                "t": "seek",
                "d": {
                    "variant": "x",
                    "tc": {"kind": "byoyomi", "main_s": 0, "period_s": 0, "periods": 1},
                },
            },
            "'period_s'",
        ),
        ({"t": "seek", "d": {"variant": "x", "tc": FISCHER, "colour": "white"}}, "'colour'"),
        ({"t": "seek", "d": {"variant": "x", "tc": FISCHER, "rated": 1}}, "'rated'"),
        ({"t": "seek", "d": {"variant": "x", "tc": FISCHER, "range": [1800, 1200]}}, "'range'"),
        ({"t": "seek", "d": {"variant": "x", "tc": FISCHER, "range": [1200]}}, "'range'"),
        ({"t": "chat", "d": {"game": "g", "text": "x" * 301}}, "'text'"),
        ({"t": "abandon_claim", "d": {"game": "g", "outcome": "lose"}}, "'outcome'"),
        # wrong JSON types anywhere, text that cannot be encoded, oversized ack ids
        ({"t": []}, "'t'"),
        ({"t": {}}, "'t'"),
        ({"t": None}, "'t'"),
        ({"t": ""}, "'t'"),
        ({"t": "x" * 33}, "'t'"),
        ({"t": "\ud800"}, "'t'"),
        ({"t": "sought", "d": 0}, "'d' must be an object"),
        ({"t": "sought", "d": False}, "'d' must be an object"),
        ({"t": "sought", "a": []}, "ack id"),
        ({"t": "sought", "a": {}}, "ack id"),
        ({"t": "sought", "a": 2**53 + 1}, "ack id"),
        ({"t": "sought", "a": "x\ud800"}, "ack id"),
        ({"t": "sought", "a": "\x00"}, "ack id"),
        ({"t": "abandon_claim", "d": {"game": "g", "outcome": []}}, "'outcome'"),
        ({"t": "abandon_claim", "d": {"game": "g", "outcome": {}}}, "'outcome'"),
        ({"t": "seek", "d": {"variant": "x", "tc": {"kind": [], "base_s": 60}}}, "'kind'"),
        ({"t": "seek", "d": {"variant": "x", "tc": FISCHER, "colour": {}}}, "'colour'"),
        ({"t": "chat", "d": {"game": "g", "text": "\ud800"}}, "valid Unicode"),
        ({"t": "chat", "d": {"game": "g", "text": "a\x00"}}, "valid Unicode"),
        ({"t": "move", "d": {"game": "g\udfff", "ply": 1, "move": "a1a2"}}, "valid Unicode"),
        ({"t": "chat", "d": {"game": [], "text": "x"}}, "'game' must be a string"),
        ({"t": "sought", "d": {"x" * 100: 1}}, "unknown field(s) 'xxxxx"),
    ],
)
def test_malformed_frames_raise_protocol_error(frame: Any, fragment: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_command(frame)
    assert fragment in str(caught.value)


def test_messages_quote_at_most_a_short_escaped_part_of_the_input() -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_command({"t": "sought", "d": {"\ud800" * 1000: 1}})
    message = str(caught.value)
    assert len(message) < 100 and "\\ud800" in message
    message.encode("utf-8")


def test_ack_of_reads_valid_ack_ids_only() -> None:
    assert ack_of({"t": "fly", "a": 3}) == 3
    assert ack_of({"a": "id"}) == "id"
    assert ack_of({"a": True}) is None
    assert ack_of([1]) is None
    assert ack_of({"a": 10**30}) is None
    assert ack_of({"a": "\ud800"}) is None

"""read_frame: one decoded frame read once into a command, an authentication frame or a review
request; every refusal is the one ProtocolError carrying the frame's valid ack id."""

from __future__ import annotations

import pytest

from server.hub.commands import MoveCommand, parse_command
from server.hub.errors import ProtocolError
from server.hub.incoming import (
    AUTH_FRAME_FIELDS,
    REVIEW_COMMAND_TYPES,
    AuthFrame,
    ChangePasswordFrame,
    LoginFrame,
    PingFrame,
    ReviewRequest,
    read_frame,
)

MOVE = {"t": "move", "d": {"game": "g1", "ply": 3, "move": "c4c5+"}, "a": 9}


def test_a_hub_command_is_what_parse_command_reads() -> None:
    command = read_frame(MOVE)
    assert command == MoveCommand("g1", 3, "c4c5+", ack=9) == parse_command(MOVE)


def test_every_authentication_type_is_an_auth_frame_with_its_fields() -> None:
    for kind, names in AUTH_FRAME_FIELDS.items():
        frame = read_frame({"t": kind, "d": {name: "x" for name in names}, "a": kind})
        assert isinstance(frame, AuthFrame) and frame.ack == kind
    assert read_frame({"t": "login", "d": {"name": "ann", "password": "\x01"}}) == LoginFrame(
        None, "ann", "\x01"
    )  # a password is a secret: any valid text
    assert read_frame({"t": "change_password", "d": {"old": "a", "new": "b"}, "a": 1}) == (
        ChangePasswordFrame(1, "a", "b")
    )
    assert read_frame({"t": "ping"}) == PingFrame(None)


def test_every_review_type_is_a_review_request_with_its_payload_unread() -> None:
    for kind in REVIEW_COMMAND_TYPES:
        request = read_frame({"t": kind, "d": {"anything": [1]}, "a": "r"})
        assert request == ReviewRequest(kind, {"anything": [1]}, "r")


@pytest.mark.parametrize(
    ("frame", "ack", "words"),
    [
        ({"t": "move", "d": {"game": "g1", "ply": 0, "move": "e2e4"}, "a": 4}, 4, "'ply'"),
        ({"t": "login", "d": {"name": "ann"}, "a": "x"}, "x", "'password'"),
        ({"t": "guest", "d": {"name": "ann"}, "a": 5}, 5, "unknown field"),
        ({"t": "nope", "a": 6}, 6, "unknown command type"),
        ({"t": "move", "x": 1, "a": 7}, 7, "unknown frame key"),
        ({"t": "move", "a": True}, None, "'a' (ack id)"),
        ([1, 2], None, "JSON object"),
    ],
)
def test_a_refusal_is_one_protocol_error_carrying_the_valid_ack(
    frame: object, ack: object, words: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        read_frame(frame)
    assert caught.value.ack == ack
    assert words in str(caught.value)

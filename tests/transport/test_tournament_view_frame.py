"""The ``tournament`` view frame, its view encoded once for every connection shown it."""

from __future__ import annotations

import json

import pytest

from server.hub.messages import Message, MessageKind
from server.hub.payloads import TournamentView
from server.transport.codec import encode_message
from server.transport.tournament_ws import view_frame


@pytest.mark.parametrize("ack", [None, 7, "x\"1"])
def test_view_frame_is_the_message_encoded(ack: int | str | None) -> None:
    view: TournamentView = {"id": "t1", "status": "created", "standings": []}  # type: ignore[typeddict-item]
    frame = view_frame("t1", view, ack)
    assert json.loads(frame) == json.loads(encode_message(Message(MessageKind.TOURNAMENT, view, a=ack)))


def test_view_frame_is_encoded_again_for_a_new_view() -> None:
    first: TournamentView = {"id": "t2", "round": 1}  # type: ignore[typeddict-item]
    assert json.loads(view_frame("t2", first, 1))["d"]["round"] == 1
    second: TournamentView = {"id": "t2", "round": 2}  # type: ignore[typeddict-item]
    assert json.loads(view_frame("t2", second, 1))["d"]["round"] == 2
    assert view_frame("t2", second, None) == view_frame("t2", second, None)

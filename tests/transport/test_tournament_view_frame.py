"""The ``tournament`` view frame: the view with one page of the standings, the connection's own
row and games, the view (but its standings) encoded once for every connection shown it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from server.hub.messages import Message, MessageKind
from server.hub.tournament_payloads import TournamentStandingsPayload, TournamentView
from server.transport.codec import encode_message
from server.transport.tournament_ws import view_frame


def _page(number: int, rows: list[Any]) -> TournamentStandingsPayload:
    return {  # type: ignore[typeddict-item]
        "id": "t1", "page": number, "pages": 3, "players": 25, "standings": rows, "playing": []
    }


@pytest.mark.parametrize("ack", [None, 7, "x\"1"])
@pytest.mark.parametrize("me", [None, {"player": "p7", "rank": 7}])
def test_view_frame_is_the_message_encoded(ack: int | str | None, me: Any) -> None:
    view: TournamentView = {"id": "t1", "status": "created", "standings": [{"rank": 1}]}  # type: ignore[typeddict-item]
    page = _page(2, [{"rank": 11}])
    mine: Any = [] if me is None else [{"game": "g1", "round": 1}]
    frame = view_frame("t1", view, page, me, ack, mine)
    shown = {
        **view, "standings": [{"rank": 11}], "page": 2, "pages": 3, "players": 25, "me": me,
        "mine": mine,
    }
    assert json.loads(frame) == json.loads(encode_message(Message(MessageKind.TOURNAMENT, shown, a=ack)))


def test_view_frame_is_encoded_again_for_a_new_view_or_page() -> None:
    first: TournamentView = {"id": "t2", "round": 1, "standings": []}  # type: ignore[typeddict-item]
    page = _page(1, [])
    assert json.loads(view_frame("t2", first, page, None, 1))["d"]["round"] == 1
    second: TournamentView = {"id": "t2", "round": 2, "standings": []}  # type: ignore[typeddict-item]
    assert json.loads(view_frame("t2", second, page, None, 1))["d"]["round"] == 2
    assert view_frame("t2", second, page, None, None) == view_frame("t2", second, page, None, None)
    other = _page(1, [{"rank": 1}])
    assert json.loads(view_frame("t2", second, other, None, None))["d"]["standings"] == [{"rank": 1}]


def test_the_view_is_encoded_once_for_every_page() -> None:
    view: TournamentView = {"id": "t3", "round": 4, "standings": []}  # type: ignore[typeddict-item]
    first = view_frame("t3", view, _page(1, [{"rank": 1}]), None, None)
    second = view_frame("t3", view, _page(2, [{"rank": 11}]), {"rank": 12}, 5)  # type: ignore[typeddict-item]
    assert json.loads(first)["d"]["standings"] == [{"rank": 1}]
    assert json.loads(second)["d"] == {
        "id": "t3", "round": 4, "standings": [{"rank": 11}], "page": 2, "pages": 3,
        "players": 25, "me": {"rank": 12}, "mine": [],
    }
    empty: TournamentView = {"standings": []}  # type: ignore[typeddict-item]
    assert json.loads(view_frame("t4", empty, _page(1, []), None, None))["d"]["page"] == 1

"""read_frame: one decoded frame read once into a command, an authentication frame or a typed
review request; every refusal is the one ProtocolError carrying the frame's valid ack id. The
HTTP review API's queries read into the same review requests (review_request), and the ICS
door's commands into the same commands (command_of) as their websocket twins."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.hub.commands import COMMAND_TYPES, Command, MoveCommand, parse_command
from server.hub.errors import ProtocolError
from server.hub.fields import MAX_PLY
from server.hub.incoming import (
    AUTH_FRAME_FIELDS,
    REVIEW_COMMAND_TYPES,
    AuthFrame,
    ChangePasswordFrame,
    LoginFrame,
    PingFrame,
    read_frame,
)
from server.hub.review_requests import (
    AnalyseRequest,
    ExportRequest,
    GameAnalysisRequest,
    ListGamesRequest,
    ReviewRequest,
    ReviewRequestError,
    ShowGameRequest,
    review_request,
)
from server.transport.ics.games import GameNumbers
from server.transport.ics.lobby import LobbyCommands
from server.transport.ics.online import ListedPlayer
from server.transport.ics.parse import CommandLine
from server.transport.ics.state import SessionState
from server.transport.ics.variants import ICS_VARIANTS

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


REVIEW_FRAMES: list[tuple[dict[str, Any], ReviewRequest]] = [
    (
        {"t": "games", "d": {"player": "ann", "limit": 5, "since": "2024-03-01"}},
        ListGamesRequest(player="ann", limit=5, since=datetime(2024, 3, 1, tzinfo=UTC)),
    ),
    ({"t": "games"}, ListGamesRequest()),
    ({"t": "review", "d": {"game": "Xq3fT0aa", "ply": 4}}, ShowGameRequest("Xq3fT0aa", 4)),
    ({"t": "review", "d": {"game": "Xq3fT0aa", "ply": None}}, ShowGameRequest("Xq3fT0aa")),
    ({"t": "export", "d": {"game": "g1", "format": "kif"}}, ExportRequest("g1", "kif")),
    ({"t": "analysis", "d": {"game": "g1"}}, GameAnalysisRequest("g1")),
    (
        {"t": "analyse", "d": {"game": "g1", "movetime_ms": "200", "depth": 12}},
        AnalyseRequest("g1", 200, 12),
    ),
]


@pytest.mark.parametrize(("frame", "request_"), REVIEW_FRAMES)
def test_a_review_frame_is_its_typed_request(frame: dict[str, Any], request_: object) -> None:
    read = read_frame({**frame, "a": "r"})
    assert read == replace(request_, ack="r")  # type: ignore[type-var]
    assert isinstance(read, ReviewRequest) and read.kind == frame["t"]


def test_every_review_type_has_a_schema() -> None:
    assert {type(request).kind for _, request in REVIEW_FRAMES} == REVIEW_COMMAND_TYPES


@pytest.mark.parametrize(
    ("frame", "code", "message"),
    [
        ({"t": "games", "d": {"limit": 500}}, "bad_request", "limit must be an integer between 1 and 100, got 500"),
        ({"t": "games", "d": {"limit": True}}, "bad_request", "limit must be an integer between 1 and 100"),
        ({"t": "games", "d": {"x": 1}}, "bad_request", "games: unknown field(s) 'x'"),
        ({"t": "review", "d": {}}, "bad_request", "review: field 'game' is required"),
        ({"t": "export", "d": {"game": "g1"}}, "bad_request", "export: fields 'game' and 'format' are required"),
        ({"t": "export", "d": {"game": "g1", "format": "epd"}}, "bad_request", "format must be one of pgn, kif, usi, got 'epd'"),
        ({"t": "analysis", "d": {"game": "a/b"}}, "not_found", "no game with id 'a/b'"),
        ({"t": "analyse", "d": {"game": "g1", "depth": 31}}, "bad_request", "depth must be an integer between 1 and 30"),
    ],
)  # fmt: skip
def test_a_refused_review_frame_names_its_field_with_the_review_api_code(
    frame: dict[str, Any], code: str, message: str
) -> None:
    with pytest.raises(ReviewRequestError) as caught:
        read_frame({**frame, "a": 3})
    assert (caught.value.code, str(caught.value), caught.value.ack) == (code, message, 3)


# An HTTP query's values are strings; the path names the game (and the export's format).
game_ids = st.from_regex(r"[0-9A-Za-z_-]{1,16}", fullmatch=True)
plies = st.one_of(st.integers(-5, MAX_PLY + 5), st.text("0123456789x-", max_size=10))


@settings(max_examples=300, deadline=None)
@given(game_ids, plies)
def test_an_http_query_and_its_websocket_twin_read_into_the_same_request(
    game: str, ply: int | str
) -> None:
    query = {"ply": str(ply)}
    frame = {"t": "review", "d": {"game": game, "ply": ply}}
    try:
        http: object = review_request("review", query, given={"game": game}, where="game")
    except ReviewRequestError as error:
        http = error.code
    try:
        ws: object = read_frame(frame)
    except ProtocolError as error:
        ws = error.code
    assert http == ws


def test_an_http_review_query_reads_as_its_websocket_frame() -> None:
    query = {"player": "ann", "variant": "spartan", "limit": "5", "offset": "10"}
    frame = {"t": "games", "d": {"player": "ann", "variant": "spartan", "limit": 5, "offset": 10}}
    assert review_request("games", query) == read_frame(frame)
    assert review_request("export", {}, given={"game": "g1", "format": "usi"}) == read_frame(
        {"t": "export", "d": {"game": "g1", "format": "usi"}}
    )
    with pytest.raises(ReviewRequestError, match=r"^game: unknown field\(s\) 'game'$"):
        review_request("review", {"game": "g2"}, given={"game": "g1"}, where="game")


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


# --- the ICS door: its commands are read by command_of, as the websocket's frames are


class _Host:
    """The ICS server process as a session's state sees it: nobody online, no store."""

    numbers = GameNumbers()
    store = None
    reads = None

    def online(self) -> list[ListedPlayer]:
        return []

    def tell(self, sender: str, name: str, text: str) -> bool:
        return False

    def later(self, delay_s: float, call: Callable[[], None]) -> None:
        pass

    def requester(self, name: str) -> str:
        return f"account:{name}"


def _ics() -> tuple[SessionState, list[Command], list[str]]:
    sent: list[Command] = []
    written: list[str] = []
    state = SessionState(
        {"id": "u1", "name": "ann", "guest": False}, sent.append, written.extend, _Host()
    )
    return state, sent, written


def test_ics_lobby_lines_send_the_commands_of_their_websocket_twins() -> None:
    state, sent, written = _ics()
    lobby = LobbyCommands(state)
    lobby.on_seek(CommandLine("seek", "5 3 rated white minishogi 1200-1800"))
    lobby.on_match(CommandLine("match", "bob 10 0 black spartan"))
    lobby.on_computer(CommandLine("computer", "3 1 2 w1"))
    lobby.on_unseek(CommandLine("unseek", "7"))
    fischer = {"kind": "fischer", "base_s": 300, "inc_s": 3}
    twins = [
        {"t": "seek", "d": {"variant": "minishogi", "tc": fischer, "rated": True,
                            "colour": "first", "range": [1200, 1800]}, "a": 1},
        {"t": "match", "d": {"to": "bob", "variant": "spartan", "colour": "second",
                             "tc": {"kind": "fischer", "base_s": 600, "inc_s": 0}}, "a": 2},
        {"t": "challenge_ai", "d": {"variant": "wildcastle", "level": 3,
                                    "tc": {"kind": "fischer", "base_s": 60, "inc_s": 2}}, "a": 3},
        {"t": "unseek", "d": {"id": 7}, "a": 4},
    ]  # fmt: skip
    assert sent == [read_frame(frame) for frame in twins]
    assert written == []


def test_an_ics_seek_index_no_seek_has_is_answered_as_before() -> None:
    state, sent, written = _ics()
    lobby = LobbyCommands(state)
    lobby.on_play(CommandLine("play", "0"))
    lobby.on_unseek(CommandLine("unseek", "0"))
    assert sent == []
    assert written == ["That seek is not available."] * 2


colours = st.sampled_from([("white", "first"), ("black", "second"), ("", "random")])
variants = st.sampled_from([(v.kind, v.name) for v in ICS_VARIANTS])
ranges = st.none() | st.tuples(st.integers(0, 5000), st.integers(0, 5000))


@settings(max_examples=400, deadline=None)
@given(
    st.integers(0, 200),
    st.integers(0, 700),
    st.none() | st.integers(0, 12),
    st.booleans(),
    colours,
    variants,
    ranges,
    st.booleans(),
)
def test_an_ics_seek_and_its_websocket_twin_give_the_same_command_or_both_are_refused(
    minutes: int,
    second: int,
    periods: int | None,
    rated: bool,
    colour: tuple[str, str],
    variant: tuple[str, str],
    rating_range: tuple[int, int] | None,
    manual: bool,
) -> None:
    words = [str(minutes), str(second), "rated" if rated else "unrated", colour[0], variant[0]]
    words += [] if periods is None else [f"byoyomi/{periods}"]
    words += [] if rating_range is None else ["{}-{}".format(*rating_range)]
    words += ["manual"] if manual else []
    state, sent, written = _ics()
    LobbyCommands(state).on_seek(CommandLine("seek", " ".join(w for w in words if w)))
    tc: dict[str, object] = (
        {"kind": "fischer", "base_s": minutes * 60, "inc_s": second}
        if periods is None
        else {"kind": "byoyomi", "main_s": minutes * 60, "period_s": second, "periods": periods}
    )
    payload = {"variant": variant[1], "tc": tc, "rated": rated, "colour": colour[1],
               "range": None if rating_range is None else list(rating_range), "manual": manual}  # fmt: skip
    try:
        twin: Command | None = parse_command({"t": "seek", "d": payload, "a": 1})
    except ProtocolError:
        twin = None
    if twin is None:  # refused by the websocket's schema: refused by the ICS door, in its words
        assert sent == [] and len(written) == 1
    else:
        assert sent == [twin] and written == []


command_fields = st.dictionaries(
    st.sampled_from(["game", "ply", "move", "id", "text", "to", "variant", "level", "watch",
                     "outcome", "reason", "v", "tc"]),
    st.one_of(st.none(), st.booleans(), st.integers(-3, 2**53 + 3), st.text(max_size=40),
              st.sampled_from(["g1", "first", "win", "spartan", "e2e4", "a/b", "x" * 400])),
    max_size=4,
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(sorted(COMMAND_TYPES)), command_fields)
def test_an_ics_command_is_its_websocket_twin_or_refused_with_the_same_error(
    kind: str, fields: dict[str, object]
) -> None:
    state, sent, _ = _ics()
    answers: list[tuple[str, object]] = []

    def answer(reply: str, data: dict[str, Any]) -> list[str]:
        answers.append((reply, data))
        return []

    state.command(kind, fields, answer)
    try:
        twin = read_frame({"t": kind, "d": fields, "a": 1})
    except ProtocolError as error:
        assert sent == [] and state.pending == {}
        assert answers == [("error", {"code": error.code, "message": str(error)})]
    else:
        assert sent == [twin] and answers == [] and set(state.pending) == {1}

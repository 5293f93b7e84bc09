"""Bad input of any shape on a live server (since dc98d00, 2026-11-25): the defects found by
hand, each reproduced on the real websocket and HTTP ports. The property-based sweep over every
command and field is ``test_transport_fuzz.py``; these are the named cases it generalises."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.protocol import State
from ws_support import Client, Game, OpenClient, StartApp, start_game

from server.app import App

FAST = {"rate_limit_per_s": 1000.0, "rate_limit_burst": 1000}


async def http_status(app: App, target: str) -> tuple[int, Any]:
    """GET ``target`` (sent as is, no quoting) over a raw socket: status and decoded JSON body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: test\r\n\r\n".encode())
    await writer.drain()
    raw = await reader.read()
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body) if body else None


@pytest.fixture
async def live(start_app: StartApp, open_client: OpenClient) -> tuple[App, Game]:
    """A server (no rate limit to speak of) and a started game between two guests."""
    app = await start_app(**FAST)
    first, second = await open_client(app, "a"), await open_client(app, "b")
    await first.guest()
    await second.guest()
    return app, await start_game(first, second)


def room_state(app: App, game_id: str) -> tuple[int, int, str]:
    room = app.hub.room(game_id)
    assert room is not None
    return room.log.version, room.game.ply, room.game.fen()


async def refused(client: Client, raw: str, ack: Any = None) -> dict[str, Any]:
    """Send ``raw``; the answer must be a bad_request/bad_json error and the socket stays open."""
    await client.ws.send(raw)
    answer = await client.next("error")
    assert answer["d"]["code"] in ("bad_request", "bad_json"), (raw[:200], answer)
    assert answer.get("a") == ack, (raw[:200], answer)
    assert client.ws.state is State.OPEN
    return answer


WRONG_ENVELOPES = [
    '{"t": []}',
    '{"t": {}}',
    '{"t": 5}',
    '{"t": null}',
    '{"t": true}',
    '{"t": ["move"], "a": 3}',
    '{"t": {"move": 1}, "d": {}}',
    '{"t": "move", "d": []}',
    '{"t": "move", "d": 0}',
    '{"t": "guest", "d": 0}',
    '{"t": "guest", "d": []}',
    '{"t": "games", "d": [1]}',
    '{"t": "review", "a": {}}',
    '{"t": "sought", "a": []}',
    '{"t": "sought", "a": 1e400}',
    '{"t": "sought", "a": 123456789012345678901234567890}',
]

WRONG_FIELDS = [
    '{"t": "move", "d": {"game": [], "ply": 1, "move": "a1a2"}}',
    '{"t": "move", "d": {"game": "g", "ply": {}, "move": "a1a2"}}',
    '{"t": "move", "d": {"game": "g", "ply": 1, "move": {"x": 1}}}',
    '{"t": "seek", "d": {"variant": {}, "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0}}}',
    '{"t": "seek", "d": {"variant": "minishogi", "tc": {"kind": [], "base_s": 60}}}',
    '{"t": "seek", "d": {"variant": "minishogi", "tc": {"kind": {}, "base_s": 60}}}',
    '{"t": "seek", "d": {"variant": "minishogi", "tc": [], "colour": {}}}',
    '{"t": "seek", "d": {"variant": "minishogi", "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0}, "colour": []}}',
    '{"t": "abandon_claim", "d": {"game": "g", "outcome": {}}}',
    '{"t": "abandon_claim", "d": {"game": "g", "outcome": []}}',
    '{"t": "chat", "d": {"game": "g", "text": []}}',
    '{"t": "login", "d": {"name": [], "password": {}}}',
    '{"t": "resume", "d": {"token": {}}}',
    '{"t": "games", "d": {"variant": []}}',
    '{"t": "games", "d": {"status": {}}}',
    '{"t": "games", "d": {"since": []}}',
    '{"t": "review", "d": {"game": {}, "ply": []}}',
    '{"t": "export", "d": {"game": [], "format": {}}}',
    '{"t": "export", "d": {"game": "abc", "format": []}}',
]


async def test_wrong_json_types_anywhere_are_refused_and_the_socket_stays_open(
    live: tuple[App, Game],
) -> None:
    app, game = live
    before = room_state(app, game.id)
    for raw in WRONG_ENVELOPES + WRONG_FIELDS:
        ack = json.loads(raw).get("a")
        valid_ack = ack if isinstance(ack, int) and abs(ack) < 2**53 else None
        await refused(game.first, raw, valid_ack)
    assert room_state(app, game.id) == before
    await game.play(game.legal[0])


@pytest.mark.parametrize(
    "raw",
    [
        '{"t": "sought", "d": {"watch": ' + "[" * 1000 + "]" * 1000 + "}}",
        '{"t": "sought", "d": {"x": ' + '{"a":' * 1500 + "1" + "}" * 1500 + "}}",
        "[" * 20000 + "]" * 20000,
        '{"t": "unseek", "d": {"id": ' + "9" * 5000 + "}}",
        '{"t": "unseek", "d": {"id": 1' + "0" * 400 + ".5}}",
        '{"t": "unseek", "d": {"id": -' + "1" * 100 + "}}",
        '{"t": "unseek", "d": {"id": 1e400}}',
        '{"t": "unseek", "d": {"id": NaN}}',
        '{"t": "chat", "d": {"game": "g", "text": "\\ud800"}}',
        '{"t": "chat", "d": {"game": "g", "text": "a\\udfff"}}',
        '{"t": "chat", "d": {"game": "g", "text": "nul\\u0000"}}',
        '{"t": "sought", "d": {"\\ud800": 1}}',
        '{"t": "\\ud800"}',
        '{"t": "guest", "d": {"\\udc00x": "\\ud800"}}',
        '{"t": "games", "d": {"player": "\\ud800"}}',
        '{"t": "review", "d": {"game": "\\ud800"}}',
    ],
    ids=lambda raw: raw[:40],
)
async def test_deep_nesting_huge_numbers_and_bad_text_are_refused(
    start_app: StartApp, open_client: OpenClient, raw: str
) -> None:
    app = await start_app(**FAST)
    client = await open_client(app)
    await client.guest()
    await refused(client, raw)
    assert (await client.request("sought"))["t"] == "sought"


async def test_a_move_with_a_bad_ack_id_is_refused_before_it_is_stored(
    live: tuple[App, Game],
) -> None:
    app, game = live
    mover = game.mover()
    move = game.legal[0]
    before = room_state(app, game.id)
    raw = json.dumps({"t": "move", "d": {"game": game.id, "ply": 1, "move": move}})
    await refused(mover, raw[:-1] + ', "a": "x\\ud800"}')
    assert room_state(app, game.id) == before
    stored = await app.store.get_game(game.id)
    assert stored is not None and stored.moves == ()
    # The same move with a good ack id goes through, seen by both players, and it is the
    # first and only move the opponent ever saw.
    event = await game.play(move)
    assert event["d"]["ply"] == 1
    assert [m for m in game.other(mover).seen if m["t"] == "move"] == [event]


async def test_a_chat_line_with_bad_text_changes_nothing_and_join_still_works(
    live: tuple[App, Game],
) -> None:
    app, game = live
    before = room_state(app, game.id)
    raw = json.dumps({"t": "chat", "d": {"game": game.id, "text": "x"}})
    await refused(game.first, raw[: -len('"}}')] + '\\udc00"}}')
    assert room_state(app, game.id) == before
    for client in (game.first, game.second):
        answer = await client.request("join", {"game": game.id})
        assert answer["t"] == "ack", answer
    snapshot = await game.first.next("game")
    assert snapshot["d"]["chat"] == []


@pytest.mark.parametrize(
    "target",
    [
        "/api/games?player=%00",
        "/api/games?player=a%00b",
        "/api/games?variant=%00",
        "/api/games?cursor=%00",
        "/api/games?since=%00",
        "/api/games?since=0001-01-01T00:00:00%2B01:00",
        "/api/games?until=9999-12-31T23:59:59-01:00",
        "/api/games?since=0001-01-01T00:00:00%2B14:00&until=0001-01-02",
        "/api/games?limit=%00",
        "/api/games?%00=1",
        "/api/games/abc?ply=%00",
        "/api/games?cursor=" + "A" * 3000,
        "/api/games?cursor=%FF%FE",
        "/api/games?player=%ED%A0%80",
    ],
)
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_bad_http_parameters_are_400_not_503(
    start_app: StartApp, target: str, backend: str
) -> None:
    app = await start_app(backend)
    status, body = await http_status(app, target)
    assert status == 400, (target, status, body)
    assert body["error"]["code"] == "bad_request" and body["error"]["message"]

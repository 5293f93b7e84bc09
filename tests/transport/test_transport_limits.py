"""Bad input, floods, oversized frames, slow clients and HTTP endpoints of the real server."""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.request
from typing import Any

import pytest
from support import wait_until
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from ws_support import Client, OpenClient, StartApp, start_game

from server.app import App


def http_get(app: App, path: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{app.port}{path}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


async def get(app: App, path: str) -> tuple[int, dict[str, str], bytes]:
    return await asyncio.to_thread(http_get, app, path)


BAD_FRAMES: list[tuple[Any, str]] = [
    ("{not json", "bad_json"),
    ("", "bad_json"),
    ("[1, 2, 3]", "bad_request"),
    ('"just a string"', "bad_request"),
    (b"\x00\x01binary", "bad_frame"),
    ('{"t": "teleport", "a": 1}', "bad_request"),
    ('{"t": "move", "d": {"game": "x"}, "a": 2}', "bad_request"),
    ('{"t": "seek", "d": {"variant": "minishogi", "tc": {"kind": "sundial"}}}', "bad_request"),
    ('{"t": "play", "d": {"id": "one"}}', "bad_request"),
    ('{"t": "sought", "x": 1}', "bad_request"),
    ('{"t": "login", "d": {"name": 5, "password": "x"}}', "bad_request"),
]


async def test_bad_frames_get_clear_errors_and_change_nothing(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(rate_limit_per_s=1000.0, rate_limit_burst=1000)
    client = await open_client(app)
    await client.guest()
    for frame, code in BAD_FRAMES:
        await client.ws.send(frame)
        answer = await client.next("error")
        assert answer["d"]["code"] == code, (frame, answer)
        assert answer["d"]["message"]
    # Errors of bad frames with an ack id carry it.
    await client.ws.send('{"t": "teleport", "a": 77}')
    answer = await client.next("error")
    assert answer["a"] == 77 and "teleport" in answer["d"]["message"]
    assert app.hub.seeks() == [] and app.driver.connections == 1
    # The connection still works normally.
    listing = await client.request("sought")
    assert listing["t"] == "sought"


async def test_a_flood_of_bad_frames_leaves_the_server_healthy(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(rate_limit_per_s=10.0, rate_limit_burst=30)
    honest = await open_client(app)
    await honest.guest()
    attackers = [await open_client(app, f"x{i}") for i in range(3)]
    for attacker in attackers:
        await attacker.guest()

    async def flood(client: Client) -> None:
        junk = [frame for frame, _ in BAD_FRAMES] * 20
        try:
            for frame in junk:
                await client.ws.send(frame)
            await client.ws.send(b"\xff" * (app.settings.max_frame_bytes + 1))
            await client.recv(5)
            await client.quiet(5)
        except ConnectionClosed:
            pass

    await asyncio.gather(*(flood(a) for a in attackers))
    for attacker in attackers:
        await asyncio.wait_for(attacker.ws.wait_closed(), 5)
        # Closed for flooding (1008), or for the oversized frame (1009) if that was read first.
        assert attacker.ws.close_code in (1008, 1009)
    await wait_until(lambda: app.driver.connections == 1)
    assert app.hub.seeks() == []
    status, _, body = await get(app, "/healthz")
    assert status == 200 and json.loads(body)["connections"] == 1
    a = honest
    b = await open_client(app)
    await b.guest()
    game = await start_game(a, b)
    await game.play("a1b2")


async def test_over_the_rate_limit_a_frame_is_refused_then_a_sustained_flood_closes(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(rate_limit_per_s=2.0, rate_limit_burst=5)
    client = await open_client(app)
    await client.guest()  # every frame counts, this one too: 4 tokens left
    for index in range(4):
        await client.send("sought", None, ack=index)
    for index in range(4):
        assert (await client.next(lambda m, i=index: m.get("a") == i))["t"] == "sought"
    await client.send("sought", None, ack="over")
    refused = await client.next(lambda m: m.get("a") == "over")
    assert refused["t"] == "error" and refused["d"]["code"] == "rate_limited"
    with pytest.raises(ConnectionClosed):
        for _ in range(50):
            await client.send("sought")
        await client.quiet(5)
    await asyncio.wait_for(client.ws.wait_closed(), 5)
    assert client.ws.close_code == 1008 and client.ws.close_reason == "rate limit exceeded"
    await wait_until(lambda: app.driver.connections == 0)


async def test_an_oversized_frame_closes_the_connection_with_1009(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(max_frame_bytes=1024)
    client = await open_client(app)
    await client.guest()
    await client.ws.send(json.dumps({"t": "chat", "d": {"game": "x", "text": "y" * 2000}}))
    await asyncio.wait_for(client.ws.wait_closed(), 5)
    assert client.ws.close_code == 1009
    await wait_until(lambda: app.driver.connections == 0)
    other = await open_client(app)
    assert (await other.guest())["t"] == "welcome"


async def test_a_slow_consumer_is_dropped_without_stalling_the_room(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """A spectator who stops reading: its queue overflows, it is dropped, the game goes on."""
    app = await start_app(send_queue_limit=8, rate_limit_per_s=1000.0, rate_limit_burst=1000)
    # Small kernel buffers on the server's side too (accepted sockets inherit them), so that a
    # few dozen messages fill them instead of megabytes.
    for listening in app.server.sockets:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    a, b = await open_client(app, "a"), await open_client(app, "b")
    await a.guest()
    await b.guest()
    game = await start_game(a, b)
    chatter = await open_client(app, "chatter")
    await chatter.guest()
    await chatter.ok("join", {"game": game.id})
    # The slow spectator: a tiny receive buffer, and it never reads after joining.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", app.port))
    slow = Client(await connect(app.url, sock=sock, max_queue=1), "slow")
    try:
        await slow.guest()
        await slow.ok("join", {"game": game.id})
        room = app.hub.room(game.id)
        assert room is not None and len(room.members) == 4
        line = "z" * 280
        for index in range(3000):
            await chatter.send("chat", {"game": game.id, "text": f"{index} {line}"})
            await chatter.next("chat")  # the chatter reads its own lines: it is not slow
            if len(room.members) == 3:
                break
        assert len(room.members) == 3, "the slow spectator was never dropped"
        # The players were never held up: the game continues at once.
        await game.play("a1b2")
        await game.play("a5a2")
        await wait_until(lambda: app.driver.connections == 3)
        # The server cuts the socket itself (after a short grace for the closing handshake).
        await wait_until(lambda: app.server.open_sockets == 3, timeout=5)
    finally:
        slow.ws.transport.abort()


async def test_healthz_reports_the_node_and_the_database(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    client = await open_client(app)
    await client.guest()
    status, headers, body = await get(app, "/healthz")
    assert status == 200 and headers["Content-Type"] == "application/json"
    report = json.loads(body)
    assert report["node"] == "test-node" and report["db"] is True
    assert report["status"] == "ok" and report["connections"] == 1


async def test_the_web_client_is_served_and_unknown_paths_are_404(
    start_app: StartApp,
) -> None:
    app = await start_app()
    status, headers, body = await get(app, "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b"<script" in body
    status, headers, script = await get(app, "/static/app.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert b"WebSocket" in script
    assert (await get(app, "/nowhere"))[0] == 404
    assert (await get(app, "/static/../app.py"))[0] == 404
    # The websocket path without an upgrade is refused by websockets itself.
    assert (await get(app, app.settings.ws_path))[0] == 426

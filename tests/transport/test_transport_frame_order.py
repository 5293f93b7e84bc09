"""Frames written back to back, which the server reads in one go: a frame it can handle at once
(from ``data_received``, server.transport.ws_internals.JitteredConnection.process_event) never
overtakes one that waits (a login, a review query), and limits and errors stay as they were.

The frames of one call to :func:`write_at_once` leave in one write to the socket; client and
server share the event loop, so they are all in the server's socket buffer before it reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from support import wait_until
from websockets.exceptions import ConnectionClosed
from ws_support import MINI_FISCHER, Client, Msg, OpenClient, StartApp, start_game

import server.transport.server as transport_server
from server.hub.effects import ConnId

Frame = dict[str, Any]


def write_at_once(client: Client, *frames: Frame | str | bytes) -> None:
    """Queue every frame in the client's protocol (dicts as JSON text frames, ``str`` as text
    frames as they are, ``bytes`` as binary frames), then write them all with one write."""
    protocol = client.ws.protocol
    for frame in frames:
        if isinstance(frame, bytes):
            protocol.send_binary(frame)
        else:
            text = frame if isinstance(frame, str) else json.dumps(frame)
            protocol.send_text(text.encode())
    flush(client)


def flush(client: Client) -> None:
    """Write what the client's protocol holds with one write to the socket."""
    client.ws.transport.write(b"".join(client.ws.protocol.data_to_send()))


async def answers(client: Client, count: int) -> list[Msg]:
    """The next ``count`` messages that carry an ack id, in the order they arrived."""
    return [await client.next(lambda m: "a" in m) for _ in range(count)]


SEEK = {"t": "seek", "d": {"variant": "minishogi", "tc": MINI_FISCHER}}


@pytest.mark.parametrize("login", ["guest", "register"])
async def test_commands_right_behind_a_login_are_handled_once_logged_in(
    login: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    client = await open_client(app)
    auth: Frame = {"t": "guest", "a": 1}
    if login == "register":  # argon2 in a thread: the login takes many turns of the loop
        auth = {"t": "register", "d": {"name": "Alice", "password": "correct horse"}, "a": 1}
    write_at_once(client, auth, {**SEEK, "a": 2}, {"t": "sought", "a": 3})
    welcome, seek, sought = await answers(client, 3)
    assert (welcome["t"], welcome["a"]) == ("welcome", 1), welcome
    assert (seek["t"], seek["a"]) == ("ack", 2), seek
    assert (sought["t"], sought["a"]) == ("sought", 3), sought
    assert [s["id"] for s in sought["d"]["seeks"]] == [seek["d"]["seek"]]
    assert [s.id for s in app.hub.seeks()] == [seek["d"]["seek"]]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_hub_commands_right_behind_a_review_query_wait_for_its_answer(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    first, second = await open_client(app, "first"), await open_client(app, "second")
    await first.guest()
    await second.guest()
    game = await start_game(first, second)
    mover = game.mover()
    move = {"t": "move", "d": {"game": game.id, "ply": 1, "move": "a1b2"}, "a": 2}
    write_at_once(mover, {"t": "games", "d": {"limit": 5}, "a": 1}, move, {"t": "sought", "a": 3})
    listing, *rest = await answers(mover, 3)
    assert (listing["t"], listing["a"]) == ("games", 1), listing
    assert [g["id"] for g in listing["d"]["games"]] == [game.id]
    by_ack = {m["a"]: m for m in rest}
    assert by_ack[2]["t"] == "ack" and by_ack[2]["d"] == {"game": game.id, "ply": 1}
    assert by_ack[3]["t"] == "sought"
    seen = await game.other(mover).next(lambda m: m["t"] == "move")
    assert seen["d"]["ply"] == 1


async def test_a_frame_arriving_while_a_queued_frame_waits_is_queued_behind_it(
    start_app: StartApp, open_client: OpenClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await start_app()
    client = await open_client(app)
    await client.guest()
    list_games = app.store.list_games
    calls: list[object] = []
    second_call, release = asyncio.Event(), asyncio.Event()

    async def gated_list_games(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == 2:
            second_call.set()
            await release.wait()
        return await list_games(*args, **kwargs)

    monkeypatch.setattr(app.store, "list_games", gated_list_games)
    # The first listing is handled at once, the second queues for the connection's task,
    # which then waits in the store with nothing left in the queue when the next frame comes.
    write_at_once(client, {"t": "games", "a": 1}, {"t": "games", "a": 2})
    await second_call.wait()
    write_at_once(client, {"t": "sought", "a": 3})
    await (await client.ws.ping())  # written after the sought frame: the server has read both
    release.set()
    got = await answers(client, 3)
    assert [(m["t"], m["a"]) for m in got] == [("games", 1), ("games", 2), ("sought", 3)]


async def test_frames_right_behind_a_logout_are_ignored(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    client = await open_client(app)
    await client.register("Alice")
    write_at_once(client, {"t": "logout", "a": 1}, {**SEEK, "a": 2}, {"t": "sought", "a": 3})
    bye = await client.next(lambda m: "a" in m)
    assert (bye["t"], bye["a"], bye["d"]) == ("ack", 1, {"logged_out": True})
    with pytest.raises(ConnectionClosed):
        await client.next(lambda m: "a" in m)
    assert client.ws.close_code == 1000 and client.ws.close_reason == "logged out"
    assert app.hub.seeks() == []
    await wait_until(lambda: app.driver.connections == 0)


async def test_frames_arriving_once_closing_are_ignored(
    start_app: StartApp, open_client: OpenClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await start_app()
    client = await open_client(app)
    await client.register("Alice")
    close = transport_server.ClientConnection._close
    release = asyncio.Event()

    async def held_close(conn: transport_server.ClientConnection, code: int, reason: str) -> None:
        await release.wait()  # the closing handshake starts when the test says
        await close(conn, code, reason)

    monkeypatch.setattr(transport_server.ClientConnection, "_close", held_close)
    write_at_once(client, {"t": "logout", "a": 1})
    bye = await client.next(lambda m: "a" in m)
    assert (bye["t"], bye["a"]) == ("ack", 1)
    # Logged out, closing, still connected to the hub: a frame now is read and ignored.
    write_at_once(client, {**SEEK, "a": 2})
    await (await client.ws.ping())  # written after the seek frame: the server has read both
    assert app.hub.seeks() == []
    release.set()
    with pytest.raises(ConnectionClosed):
        await client.next(lambda m: "a" in m)
    assert client.ws.close_code == 1000 and client.ws.close_reason == "logged out"
    await wait_until(lambda: app.driver.connections == 0)


async def test_the_rate_limit_applies_to_frames_read_in_one_go(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(rate_limit_per_s=2.0, rate_limit_burst=5)
    client = await open_client(app)
    await client.guest()  # every frame counts, this one too: 4 tokens left
    write_at_once(client, *({"t": "sought", "a": index} for index in range(5)))
    got = await answers(client, 5)
    assert [(m["t"], m["a"]) for m in got[:4]] == [("sought", index) for index in range(4)]
    assert (got[4]["t"], got[4]["a"], got[4]["d"]["code"]) == ("error", 4, "rate_limited")
    write_at_once(client, *({"t": "sought", "a": index} for index in range(5, 55)))
    received: list[Msg] = []
    with pytest.raises(ConnectionClosed):
        while True:
            received.append(await client.recv(5))
    assert client.ws.close_code == 1008 and client.ws.close_reason == "rate limit exceeded"
    # A few refusals, then the verdict: what follows it is ignored.
    assert 0 < len(received) < 20
    assert received[0]["d"]["code"] == "rate_limited"
    await wait_until(lambda: app.driver.connections == 0)


async def test_binary_and_fragmented_frames_keep_their_place(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    client = await open_client(app)
    await client.guest()
    protocol = client.ws.protocol
    protocol.send_binary(b"\x00\x01binary")
    sought = json.dumps({"t": "sought", "a": 1}).encode()
    protocol.send_text(sought[:5], fin=False)
    protocol.send_continuation(sought[5:9], fin=False)
    protocol.send_continuation(sought[9:], fin=True)
    protocol.send_text(json.dumps({**SEEK, "a": 2}).encode())
    flush(client)
    refused = await client.next()
    assert refused["t"] == "error" and refused["d"]["code"] == "bad_frame", refused
    first, second = await answers(client, 2)
    assert (first["t"], first["a"]) == ("sought", 1) and first["d"]["seeks"] == []
    assert (second["t"], second["a"]) == ("ack", 2)


async def test_a_text_frame_that_is_not_utf8_closes_with_1007(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    client = await open_client(app)
    await client.guest()
    client.ws.protocol.send_text(b'{"t": "sought", "a": "\xff"}')
    flush(client)
    with pytest.raises(ConnectionClosed):
        await client.next(lambda m: "a" in m)
    assert client.ws.close_code == 1007
    await wait_until(lambda: app.driver.connections == 0)


async def test_a_failure_while_handling_a_frame_is_answered_and_the_connection_stays(
    start_app: StartApp,
    open_client: OpenClient,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = await start_app()
    client = await open_client(app)

    async def broken_register(name: str, password: str) -> Any:
        raise RuntimeError("a bug while registering")

    monkeypatch.setattr(app.accounts, "register", broken_register)
    handle = app.driver.handle
    calls: list[Any] = []

    def broken_handle(conn_id: ConnId, command: Any, lag_ms: int) -> None:
        calls.append(command)
        if len(calls) == 1:
            raise RuntimeError("a bug in the hub")
        handle(conn_id, command, lag_ms)

    monkeypatch.setattr(app.driver, "handle", broken_handle)
    register = {"t": "register", "d": {"name": "Alice", "password": "correct horse"}, "a": 1}
    with caplog.at_level(logging.ERROR, logger="server.transport.server"):
        write_at_once(
            client,
            register,
            {"t": "guest", "a": 2},
            {"t": "sought", "a": 3},
            {"t": "sought", "a": 4},
        )
        got = await answers(client, 4)
    assert [(m["t"], m["a"]) for m in got] == [
        ("error", 1),
        ("welcome", 2),
        ("error", 3),
        ("sought", 4),
    ]
    assert got[0]["d"]["code"] == got[2]["d"]["code"] == "internal_error"
    assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 2
    assert app.driver.connections == 1 and not client.ws.close_code


async def test_a_failure_outside_the_frame_guard_closes_with_1011(
    start_app: StartApp,
    open_client: OpenClient,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = await start_app()
    client = await open_client(app)
    await client.guest()

    def broken_decode(text: str) -> Any:
        raise RuntimeError("a bug in the decoder")

    monkeypatch.setattr(transport_server, "decode", broken_decode)
    with caplog.at_level(logging.ERROR):
        write_at_once(client, {**SEEK, "a": 1}, {**SEEK, "a": 2})
        with pytest.raises(ConnectionClosed):
            await client.next(lambda m: "a" in m)
        assert client.ws.close_code == 1011
        await wait_until(lambda: any(r.exc_info for r in caplog.records))
    assert app.hub.seeks() == []
    await wait_until(lambda: app.driver.connections == 0)


async def test_a_login_cut_short_by_the_client_leaves_no_connection_in_the_hub(
    start_app: StartApp, open_client: OpenClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await start_app()
    connected: list[ConnId] = []
    disconnected: list[ConnId] = []
    connect, disconnect = app.driver.connect, app.driver.disconnect

    def recording_connect(conn_id: ConnId, *args: Any) -> None:
        connected.append(conn_id)
        connect(conn_id, *args)

    def recording_disconnect(conn_id: ConnId) -> None:
        disconnected.append(conn_id)
        disconnect(conn_id)

    monkeypatch.setattr(app.driver, "connect", recording_connect)
    monkeypatch.setattr(app.driver, "disconnect", recording_disconnect)
    client = await open_client(app)
    register = {"t": "register", "d": {"name": "Alice", "password": "correct horse"}, "a": 1}
    write_at_once(client, register)
    client.ws.transport.abort()  # gone while the password is being hashed
    await wait_until(lambda: bool(connected))
    await wait_until(lambda: disconnected == connected)
    await wait_until(lambda: app.driver.connections == 0 and app.server.open_sockets == 0)

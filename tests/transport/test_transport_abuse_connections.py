"""Abuse of connections (since 34eaa62, 2026-12-06), against the live server with raw sockets,
websockets, aiohttp and ICS clients, an attacker's address (127.0.0.2…) beside an honest
player's (127.0.0.1): per-address and total limits counted at accept, the websockets' queue
served one address after another, timeouts of request heads, bodies, idle keep-alives and
logins, PROXY headers believed from a trusted balancer only, and client-triggered errors
logged without a traceback. The limits are lowered through the settings (tens of connections
here; thousands in bench/abuse_connections.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import struct
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from ics_support import IcsClient
from support import wait_until
from ws_support import Client, StartApp, start_game

from server.app import App
from server.transport.addresses import (
    PROXY_V2_SIGNATURE,
    ProxyHeader,
    ProxyHeaderError,
    parse_proxy_header,
)
from server.transport.admission import Door
from server.transport.public import OPENING_HOLD_S

ATTACKER = "127.0.0.2"
WS_UPGRADE = (
    b"GET /ws HTTP/1.1\r\nHost: hub\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)
HONEST_LOGIN_S = 3.0
"""An honest login (connect, ``guest``, ``welcome``, ``hello``) takes milliseconds here; under
the attacks below it must stay within this (the unbounded FIFO queue made it 10 s and more)."""

Raw = tuple[asyncio.StreamReader, asyncio.StreamWriter]


@pytest.fixture
async def raw() -> AsyncIterator[Any]:
    opened: list[asyncio.StreamWriter] = []

    async def open_(app: App, source: str = ATTACKER, data: bytes = b"", port: int = 0) -> Raw:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port or app.port, local_addr=(source, 0)
        )
        opened.append(writer)
        if data:
            writer.write(data)
        return reader, writer

    yield open_
    for writer in opened:
        writer.close()


async def status_of(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The status and body of the one answer a connection gets before it is closed."""
    answer = await asyncio.wait_for(reader.read(), 5)
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


async def closed_without_answer(reader: asyncio.StreamReader) -> bool:
    """Whether the server closes the connection (or resets it: the client's bytes were left
    unread) without a byte of answer."""
    try:
        return await asyncio.wait_for(reader.read(), 5) == b""
    except ConnectionResetError:
        return True


async def honest_guest(app: App) -> tuple[Client, float]:
    began = time.monotonic()
    client = await Client.open(app.url)
    await client.guest()
    return client, time.monotonic() - began


def no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [r.getMessage() for r in bad]


async def test_one_address_over_its_limit_is_refused_with_429_and_others_are_served(
    start_app: StartApp, raw: Any
) -> None:
    app = await start_app(max_connections_per_address=5)
    # Five silent sockets: each counts from its accept, before it says anything.
    for _ in range(5):
        await raw(app)
    await wait_until(lambda: app.admission.count(Door.PUBLIC, ATTACKER) == 5)
    # A sixth (forging X-Forwarded-For: never read) is refused with a short JSON answer.
    forged = WS_UPGRADE.replace(b"Host: hub\r\n", b"Host: hub\r\nX-Forwarded-For: 10.9.9.9\r\n")
    reader, _ = await raw(app, data=forged)
    status, body = await status_of(reader)
    assert status == 429 and "at most 5" in json.loads(body)["error"]
    # The honest player beside it: a login and an HTTP API request, at once.
    client, took = await honest_guest(app)
    assert took < HONEST_LOGIN_S
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{app.port}/api/bot/online") as answer,
    ):
        assert answer.status == 200
    await client.close()


async def test_at_the_cap_only_a_health_check_is_served(start_app: StartApp, raw: Any) -> None:
    """``max_connections`` counts every door: over it, a connection within the health-check
    reserve gets ``/healthz`` and nothing else (503), so HAProxy keeps the hub in rotation."""
    app = await start_app(max_connections=16)
    for index in range(16):
        await raw(app, source=f"127.0.0.{10 + index % 4}")
    await wait_until(lambda: app.admission.total >= 16)
    reader, _ = await raw(app, source="127.0.0.3", data=WS_UPGRADE)
    status, body = await status_of(reader)
    assert status == 503 and "full" in json.loads(body)["error"]
    reader, _ = await raw(app, source="127.0.0.3", data=b"GET /healthz HTTP/1.1\r\n\r\n")
    assert (await reader.readline()).startswith(b"HTTP/1.1 200")


async def test_silent_websockets_of_one_address_do_not_queue_ahead_of_an_honest_login(
    start_app: StartApp, raw: Any
) -> None:
    """Complete upgrades that never log in hold an opening slot for 1 s each; the
    queue behind the slots serves addresses in turn, so an honest login waits for one slot,
    not for the attacker's whole queue (FIFO: 20 / 2 slots = 10 s here). Over the address's
    share of the queue, the attacker gets 503; the queue full (of the attacker's), the honest
    connection takes the place of the attacker's oldest."""
    app = await start_app(max_opening=2, max_queued_per_address=18, max_queued=18)
    attackers = [await raw(app, data=WS_UPGRADE) for _ in range(20)]
    await wait_until(lambda: app.listener.opening == 2 and app.listener.queued == 18)
    reader, _ = await raw(app, data=WS_UPGRADE)
    assert (await status_of(reader))[0] == 503
    client, took = await honest_guest(app)
    assert took < HONEST_LOGIN_S
    assert app.listener.queued >= 14  # the attacker's are still queued: it did not wait for them
    await client.close()
    del attackers


@pytest.mark.parametrize("silent_hold_s", [0.1, 1000.0], ids=["silent_let_go", "old_hold"])
async def test_silent_upgrades_from_many_addresses_give_their_opening_slots_back(
    start_app: StartApp, raw: Any, silent_hold_s: float
) -> None:
    """Complete upgrades that never ask to log in, from eight
    addresses, six times as many as the opening slots. Each lets its slot go ``silent_hold_s``
    after its handshake and stays open (until ``login_timeout_s``), so an honest login waits
    for a round or two of that, well under a second. With the hold set very high (the
    behaviour before ``silent_hold_s``), each held its slot for ``OPENING_HOLD_S`` and the
    honest login, behind one connection of each address, waited two whole holds."""
    app = await start_app(
        max_opening=4,
        max_connections_per_address=100,
        max_queued_per_address=100,
        silent_hold_s=silent_hold_s,
    )
    addresses = [f"127.0.0.{n}" for n in range(2, 10)]
    attackers = [await raw(app, source=addresses[i % 8], data=WS_UPGRADE) for i in range(24)]
    await wait_until(
        lambda: sum(app.admission.count(Door.PUBLIC, a) for a in addresses) == len(attackers)
    )
    client, took = await honest_guest(app)
    assert (took < OPENING_HOLD_S) is (silent_hold_s < OPENING_HOLD_S), took
    if silent_hold_s < OPENING_HOLD_S:
        # Every silent upgrade is open at once, six times the slots, none of them opening.
        await wait_until(lambda: app.server.open_sockets == len(attackers) + 1)
        await wait_until(lambda: app.listener.opening == 0 and app.listener.queued == 0)
        reader, _ = attackers[-1]
        assert (await reader.readline()).startswith(b"HTTP/1.1 101")
    await client.close()


async def test_a_login_that_waits_keeps_its_opening_slot_past_the_silent_hold(
    start_app: StartApp, raw: Any
) -> None:
    """The reconnect storm's bound stays: a connection whose login has arrived holds its slot
    while the login waits (here for its address's turn to hash a password, held by the test
    as another login from that address would), past ``silent_hold_s``; a silent upgrade
    beside it lets its slot go. The login done, its slot is free."""
    app = await start_app(max_opening=4, silent_hold_s=0.05)
    registrant = await Client.open(app.url)
    await registrant.register("waiter")
    await wait_until(lambda: app.listener.opening == 0)
    async with app.accounts.guard.one_at_a_time("127.0.0.1"):
        silent = await raw(app, data=WS_UPGRADE)
        waiter = Client(await _connect(app))
        await waiter.send("login", {"name": "waiter", "password": "correct horse"}, ack=1)
        await wait_until(lambda: app.server.open_sockets == 3)  # both past their handshake
        await wait_until(lambda: app.listener.opening == 1)  # the silent one let go
        # Both silence timers have run by the end of a timer set after them, twice as long.
        passed = asyncio.Event()
        asyncio.get_running_loop().call_later(0.1, passed.set)
        await passed.wait()
        assert app.listener.opening == 1  # the waiting login still holds its slot
    assert (await waiter.next("welcome"))["a"] == 1
    await wait_until(lambda: app.listener.opening == 0)
    await waiter.close()
    await registrant.close()
    del silent


async def test_a_refused_login_gives_its_opening_slot_back_at_once(start_app: StartApp) -> None:
    """A connection whose login is refused (here a wrong password; once its address is backed
    off, without a hash) no longer counts as opening when the refusal is sent, and stays open
    to try again: bad logins cannot hold the slots for ``OPENING_HOLD_S`` each."""
    app = await start_app(max_opening=4, silent_hold_s=1000.0)
    client = Client(await _connect(app))
    await wait_until(lambda: app.listener.opening == 1)
    answer = await client.login("nobody", "wrong password")
    assert answer["t"] == "error" and answer["d"]["code"] == "bad_credentials"
    assert app.listener.opening == 0
    assert (await client.request("ping"))["t"] == "pong"  # still open
    await client.close()


async def test_a_player_reconnects_into_his_game_while_an_address_holds_its_maximum(
    start_app: StartApp, raw: Any
) -> None:
    """Silent connections' worst case: an opponent must not win by the grace running out because one
    address holds all it may of silent and unfinished connections."""
    app = await start_app(max_connections_per_address=12, max_opening=2, login_timeout_s=5.0)
    alice, bob = Client(await _connect(app), "alice"), Client(await _connect(app), "bob")
    await alice.guest()
    await bob.guest()
    game = await start_game(alice, bob)
    await game.play(game.legal[0])
    for index in range(12):  # silent, half-sent heads and complete upgrades, from one address
        await raw(app, data=[b"", b"GET /ws HTTP/1.1\r\nHo", WS_UPGRADE][index % 3])
    await wait_until(lambda: app.admission.count(Door.PUBLIC, ATTACKER) == 12)
    token = game.mover().token
    assert token is not None
    mover_was_first = game.mover() is game.first
    await game.mover().close()
    began = time.monotonic()
    back = Client(await _connect(app))
    await back.resume(token)
    await back.ok("join", {"game": game.id})
    if mover_was_first:
        game.first = back
    else:
        game.second = back
    await game.play(game.legal[0])  # a move acknowledged: he is back in his game
    assert time.monotonic() - began < HONEST_LOGIN_S
    await alice.close()
    await bob.close()
    await back.close()


async def _connect(app: App) -> Any:
    from websockets.asyncio.client import connect

    return await connect(app.url)


async def test_slow_heads_slow_bodies_and_idle_keepalives_are_cut_off(
    start_app: StartApp, raw: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A head trickled, a body announced and not sent, a kept-alive connection left
    idle: each is closed after its timeout, and an honest request beside them is answered."""
    caplog.set_level(logging.INFO)
    app = await start_app(header_timeout_s=0.5, body_timeout_s=0.5, http_keepalive_s=0.5)
    began = time.monotonic()
    heads = [
        await raw(app, data=b"GET /api/account HTTP/1.1\r\nHost: a\r\nX-Slow: "),
        await raw(app, data=b"GET /healthz HTTP/1.1\r\nHo"),
        await raw(app, data=b"GET /ws HTT"),
    ]
    body, _ = await raw(
        app,
        data=b"POST /api/token HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-"
        b"urlencoded\r\nContent-Length: 1000000\r\n\r\nname=a",
    )
    idle, _ = await raw(app, data=b"GET /api/bot/online HTTP/1.1\r\nHost: a\r\n\r\n")
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{app.port}/api/bot/online") as answer,
    ):
        assert answer.status == 200
    for reader, _ in heads:
        assert await closed_without_answer(reader)
    status, answer_body = await status_of(body)
    assert status == 408 and "did not arrive" in json.loads(answer_body)["error"]
    first = await asyncio.wait_for(idle.read(), 5)  # its answer, then closed when idle
    assert first.startswith(b"HTTP/1.1 200")
    assert time.monotonic() - began < 4.0
    no_errors_logged(caplog)


BODY_ENDPOINTS = [
    "/api/token",
    "/api/challenge/somebody",
    "/api/bot/game/abcdefgh/chat",
    "/api/game/abcdefgh/analysis",
    "/fishnet/acquire",
]


async def test_bodies_cut_off_and_deep_json_are_no_errors(
    start_app: StartApp, caplog: pytest.LogCaptureFixture
) -> None:
    """A body cut off by a reset, on every endpoint that reads one, before any login
    check; a JSON body nested 100,000 deep: a 400 saying so. No ERROR, no traceback."""
    caplog.set_level(logging.INFO)
    app = await start_app()
    for path in BODY_ENDPOINTS:
        sock = socket.create_connection(("127.0.0.1", app.port))
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
            'Content-Length: 5000\r\n\r\n{"a": '.encode()
        )
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # RST
    deep = b"[" * 100_000 + b"]" * 100_000
    async with aiohttp.ClientSession() as http:
        for path in BODY_ENDPOINTS:
            headers = {"Content-Type": "application/json"}
            async with http.post(
                f"http://127.0.0.1:{app.port}{path}", data=deep, headers=headers
            ) as answer:
                text = await answer.text()
                assert answer.status in (400, 401, 404), (path, answer.status, text)
        async with http.post(
            f"http://127.0.0.1:{app.port}/api/game/abcdefgh/analysis",
            data=deep,
            headers={"Content-Type": "application/json"},
        ) as answer:
            assert answer.status == 400
            assert "deeper than" in (await answer.json())["error"]
        # The honest request after them (and the sentinel that the resets were all handled).
        async with http.get(f"http://127.0.0.1:{app.port}/api/bot/online") as answer:
            assert answer.status == 200
    await wait_until(lambda: app.api.connections == 0)
    cut = [r for r in caplog.records if "went away during its body" in r.getMessage()]
    assert len(cut) == len(BODY_ENDPOINTS) and all(r.levelno == logging.INFO for r in cut)
    no_errors_logged(caplog)


async def test_a_websocket_or_ics_session_not_logged_in_is_closed_with_a_reason(
    start_app: StartApp,
) -> None:
    app = await start_app(ics=True, login_timeout_s=0.3)
    from websockets.exceptions import ConnectionClosed

    silent = Client(await _connect(app))
    with pytest.raises(ConnectionClosed) as closed:
        await silent.recv(timeout=5)
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "authentication timeout")
    ics = await IcsClient.open(app.ics_port)
    await ics.expect(r"LOGIN TIMEOUT")
    assert await asyncio.wait_for(ics.reader.read(), 5) == b""


async def test_the_ics_port_limits_each_address(start_app: StartApp, raw: Any) -> None:
    app = await start_app(ics=True, ics_max_connections_per_address=2)
    for _ in range(2):
        reader, _ = await raw(app, port=app.ics_port)
        assert b"login:" in await asyncio.wait_for(reader.readuntil(b"login: "), 5)
    reader, _ = await raw(app, port=app.ics_port)
    refusal = await asyncio.wait_for(reader.read(), 5)
    assert b"too many connections from your address (at most 2)" in refusal
    honest = await IcsClient.guest(app)  # from 127.0.0.1, at once
    await honest.close()


PROXIED = "198.51.100.7"


async def test_a_proxy_header_is_believed_from_a_trusted_balancer_only(
    start_app: StartApp, raw: Any
) -> None:
    """From the balancer (127.0.0.9 here) the PROXY header names the client, counted and
    limited as such; from anyone else a PROXY line is a bad request (400), on its own address."""
    app = await start_app(ics=True, trusted_proxies="127.0.0.9", max_connections_per_address=2)
    v1 = f"PROXY TCP4 {PROXIED} 127.0.0.1 5555 80\r\n".encode()
    v2 = (
        PROXY_V2_SIGNATURE
        + bytes([0x21, 0x11])
        + struct.pack("!H", 12)
        + socket.inet_aton(PROXIED)
        + socket.inet_aton("127.0.0.1")
        + struct.pack("!HH", 5555, 80)
    )
    for header in (v1, v2):
        reader, _ = await raw(
            app, source="127.0.0.9", data=header + b"GET /healthz HTTP/1.1\r\n\r\n"
        )
        assert (await reader.readline()).startswith(b"HTTP/1.1 200")
    assert app.admission.count(Door.PUBLIC, PROXIED) == 2
    reader, _ = await raw(app, source="127.0.0.9", data=v1 + WS_UPGRADE)
    assert (await status_of(reader))[0] == 429  # that client's limit, not the balancer's
    # A websocket through the balancer logs in as usual.
    other = b"PROXY TCP4 203.0.113.9 127.0.0.1 5556 80\r\n"
    reader, writer = await raw(app, source="127.0.0.9", data=other + WS_UPGRADE)
    assert (await reader.readline()).startswith(b"HTTP/1.1 101")
    # Forged from an untrusted address: no upgrade (the PROXY line is a malformed request
    # line to websockets), and counted on the sender's own address.
    reader, _ = await raw(app, data=v1 + WS_UPGRADE)
    answer = await asyncio.wait_for(reader.read(), 5)
    assert not answer or answer.startswith(b"HTTP/1.1 400")
    assert app.admission.count(Door.PUBLIC, PROXIED) == 2
    # The ICS port: the balancer's header names the client there too.
    reader, _ = await raw(app, source="127.0.0.9", port=app.ics_port, data=v1)
    assert b"login:" in await asyncio.wait_for(reader.readuntil(b"login: "), 5)
    assert app.admission.count(Door.ICS, PROXIED) == 1
    del writer


@given(st.binary(max_size=300))
def test_any_bytes_are_a_proxy_header_more_to_come_or_refused(data: bytes) -> None:
    try:
        header = parse_proxy_header(data)
    except ProxyHeaderError:
        return
    assert header is None or (isinstance(header, ProxyHeader) and header.length <= len(data))

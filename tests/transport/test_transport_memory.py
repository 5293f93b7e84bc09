"""A closed connection is freed by reference counting: it leaves no reference cycle of the
server's (or websockets') objects for a full garbage collection to find. The collector policy
freezes the long-lived heap periodically (server.app.collector), and cyclic garbage frozen
before a collection sees it would never be freed (docs/benchmarks.md, "Garbage collection"). tests/hub/test_hub_memory.py checks the same of finished games."""

from __future__ import annotations

import asyncio
import gc
import random
import sys
from collections import Counter
from pathlib import Path

from ics_support import IcsClient
from support import wait_until
from ws_support import Client, OpenClient, StartApp, play_random, start_game

from server.app import App

OURS = ("server.", "websockets.server.", "websockets.asyncio.server.")
"""The server's own types and websockets' server side (the test's clients are not checked:
websockets' client protocol keeps the same cycle; the parts of a connection, frames, buffers,
hang off these)."""


def ours() -> Counter[str]:
    """The server's and websockets' server-side objects the collector tracks, by type."""
    names = (f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())
    return Counter(name for name in names if name.startswith(OURS))


def our_cyclic_garbage() -> Counter[str]:
    """The server's and websockets' objects that only a full collection frees, by type.

    Counted as what disappears in the collection rather than what ``gc.DEBUG_SAVEALL`` keeps:
    a cycle through a suspended generator (say) is freed by the generator's finalizer, and
    never shows in ``gc.garbage``. (Under the standard library's event loop each closed socket
    transport is in a cycle with its own bound method; uvloop's, which the server runs on, are
    not: those are not ours.)"""
    before = ours()
    gc.collect()
    return before - ours()


async def test_closed_connections_leave_no_cyclic_garbage(
    start_app: StartApp, open_client: OpenClient, no_automatic_collection: None
) -> None:
    app: App = await start_app(ics=True)
    # Warm up: whatever is created once per process (caches, the first game's lazy tables).
    warm = await Client.open(app.url)
    await warm.guest()
    await warm.close()
    await wait_until(lambda: app.server.open_sockets == 0)
    our_cyclic_garbage()

    # Guests that log in and leave; players that play a game, resign, and leave; a player
    # closed by the server (logout); ICS guests.
    for _ in range(3):
        client = await Client.open(app.url)
        await client.guest()
        await client.close()
    first, second = await Client.open(app.url), await Client.open(app.url)
    await first.guest()
    await second.guest()
    game = await start_game(first, second)
    if await play_random(game, random.Random(3), 12) is None:
        await game.first.ok("resign", {"game": game.id})
        await game.end()
    await first.ok("logout")
    await second.close()
    await first.close()
    ics = await IcsClient.guest(app)
    await ics.close()
    await wait_until(lambda: app.server.open_sockets == 0)
    await wait_until(lambda: app.ics is not None and not app.ics._connections)
    del client, first, second, game, ics

    assert our_cyclic_garbage() == Counter()


BURST = 300
"""Connections in the login burst."""

PER_CONNECTION = Counter(
    {
        # websockets' connection: its protocol and parser (three suspended generators, the
        # handshake's request with its headers emptied, the last frame read, the parser's
        # lists), the message assembler and its queue, two futures, a logger adapter.
        "server.transport.ws_internals.JitteredConnection": 1,
        "websockets.server.ServerProtocol": 1,
        "websockets.streams.StreamReader": 1,
        "websockets.http11.Request": 1,
        "websockets.datastructures.Headers": 1,
        "websockets.frames.Frame": 1,
        "websockets.asyncio.messages.Assembler": 1,
        "websockets.asyncio.messages.SimpleQueue": 1,
        "logging.LoggerAdapter": 1,
        "uuid.UUID": 1,
        "builtins.generator": 3,
        # asyncio's socket transport (under the test's event loop, asyncio's own).
        "asyncio.selector_events._SelectorSocketTransport": 1,
        "asyncio.trsock.TransportSocket": 1,
        "socket.socket": 1,
        "selectors.SelectorKey": 1,
        "asyncio.events.Handle": 1,
        "weakref.ProxyType": 1,
        # Two tasks: the connection's handler (its coroutines down to the queue it waits on)
        # and the keepalive (asleep until its first ping): coroutines, their futures,
        # contexts and the weak references of the tasks' registry.
        "_asyncio.Task": 2,
        "builtins.coroutine": 8,
        "_asyncio.Future": 4,
        "_asyncio.FutureIter": 2,
        "_contextvars.Context": 5,
        "asyncio.events.TimerHandle": 2,
        "weakref.ReferenceType": 2,
        "weakref.KeyedRef": 1,
        "builtins.builtin_function_or_method": 2,
        "builtins.method": 6,
        "builtins.list": 6,
        "builtins.tuple": 3,
        "builtins.dict": 2,
        "builtins.set": 1,
        "builtins.mappingproxy": 1,
        "collections.deque": 3,
        # The server's: the connection, its outbox and rate limiter, the identity and its
        # guest player, the hub's connection and online player.
        "server.transport.server.ClientConnection": 1,
        "server.transport.outbox.Outbox": 1,
        "server.transport.ratelimit.TokenBucket": 1,
        "server.transport.accounts.Identity": 1,
        "server.hub.identity.PlayerInfo": 1,
        "server.hub.hub_state.Connection": 1,
        "server.hub.hub_state.OnlinePlayer": 1,
    }
)
"""What the collector tracks for each idle guest connection, once logged in (76 objects;
100 before 4d9ac60 let go of the handshake's headers and response, the login's finished
task, the authentication timer and the reading loop's async generator). Each of them is
scanned by the timed collection that follows a burst of logins (server.app.collector)."""


def tracked() -> Counter[str]:
    """Every object the collector tracks, by type."""
    return Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())


async def test_a_login_burst_leaves_only_the_stated_tracked_objects_per_connection(
    start_app: StartApp, no_automatic_collection: None
) -> None:
    # Keepalive far off: every connection's keepalive waits in the same place.
    # One address opens them all: its limits raised to let the burst in.
    app: App = await start_app(
        ping_interval_s=3600.0,
        max_connections_per_address=BURST + 8,
        max_queued_per_address=BURST,
    )
    warm = await Client.open(app.url)
    await warm.guest()
    await warm.close()
    await wait_until(lambda: app.server.open_sockets == 0)
    del warm
    gc.collect()
    before = tracked()
    # The clients run in a process of their own: only the server's objects are counted here.
    clients = await asyncio.create_subprocess_exec(
        sys.executable,
        str(Path(__file__).with_name("burst_clients.py")),
        app.url,
        str(BURST),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert clients.stdin is not None and clients.stdout is not None
    try:
        assert await clients.stdout.readline() == b"ready\n"
        assert app.server.open_sockets == BURST
        gc.collect()
        grown = tracked()
        grown.subtract(before)
    finally:
        clients.stdin.close()
        await clients.wait()
    await wait_until(lambda: app.server.open_sockets == 0)
    # Per connection, nothing beyond what is stated: what grows by less than one object per
    # ten connections is shared (a dict resized, the test's own subprocess), not per
    # connection. Reported: how many more per connection than stated.
    beyond = {
        name: round(count / BURST - PER_CONNECTION[name], 2)
        for name, count in grown.items()
        if count > PER_CONNECTION[name] * BURST + BURST // 10
    }
    assert beyond == {}
    assert sum(PER_CONNECTION.values()) == 76

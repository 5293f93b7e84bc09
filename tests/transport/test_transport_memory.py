"""A closed connection is freed by reference counting: it leaves no reference cycle of the
server's (or websockets') objects for a full garbage collection to find. The collector policy
freezes the long-lived heap periodically (server.app.collector), and cyclic garbage frozen
before a collection sees it would never be freed (docs/benchmarks.md, "Garbage collection
(issue 14)"). tests/hub/test_hub_memory.py checks the same of finished games."""

from __future__ import annotations

import gc
import random
from collections import Counter

from ics_support import IcsClient
from ws_support import Client, OpenClient, StartApp, play_random, start_game, wait_for

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
    await wait_for(lambda: app.server.open_sockets == 0)
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
    await wait_for(lambda: app.server.open_sockets == 0)
    await wait_for(lambda: app.ics is not None and not app.ics._connections)
    del client, first, second, game, ics

    assert our_cyclic_garbage() == Counter()

"""A room event lost on the bus between a game's owner and a player's node is noticed and
asked for again: two in-process hubs in cluster mode on the real Redis and PostgreSQL.

Redis pub/sub delivers at most once; the test loses one forwarded ``move`` event on purpose
(the owner's sender skips that one envelope, as a publish lost around a Redis restart would)
and checks that the player on the other node still receives every move, in version order, with
no version skipped.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from cluster_support import Client, finished_game, move_events, pair, scripted_game
from support import create_database, drop_database, node_settings

from server.app import App
from server.cluster.node import ClusterDriver

LOST_PLY = 4


@pytest.fixture
async def database() -> AsyncIterator[str]:
    url = await create_database("lost_event")
    try:
        yield url
    finally:
        await drop_database(url)


@pytest.fixture
async def nodes(database: str) -> AsyncIterator[list[App]]:
    prefix = f"lost-{uuid.uuid4().hex[:8]}:"
    apps: list[App] = []
    try:
        for name in ("node-a", "node-b"):
            settings = node_settings(name, database, prefix)
            app = App(settings)
            await app.start()
            apps.append(app)
        yield apps
    finally:
        for app in reversed(apps):
            await app.stop()


def lose_one_move_event(app: App, lost: list[dict[str, Any]]) -> None:
    """The node's sender skips the first forwarded ``move`` event of ply ``LOST_PLY``."""
    driver = app.driver
    assert isinstance(driver, ClusterDriver)
    sender = driver.sender
    envelope: Callable[..., None] = sender.envelope

    def lossy(node_id: str, header: dict[str, Any], body: bytes = b"") -> None:
        moved = not lost and header.get("k") == "out" and header.get("t") == "move"
        if moved and f'"ply":{LOST_PLY}'.encode() in body.replace(b" ", b""):
            lost.append(header)
            return
        envelope(node_id, header, body)

    sender.envelope = lossy  # type: ignore[method-assign]


async def test_a_lost_forwarded_event_is_asked_for_again(nodes: list[App], database: str) -> None:
    lost: list[dict[str, Any]] = []
    for app in nodes:
        lose_one_move_event(app, lost)
    first = await Client.register(nodes[0].url, "first")
    second = await Client.register(nodes[1].url, "second")
    game_id = await pair(first, second)
    moves = scripted_game(seed=1)
    assert len(moves) > LOST_PLY + 2
    for ply, move in enumerate(moves, start=1):
        mover = first if ply % 2 else second
        ack = await mover.ok("move", {"game": game_id, "ply": ply, "move": move})
        assert ack == {"game": game_id, "ply": ply}
    for client in (first, second):
        await client.next("end")
    assert len(lost) == 1, "no move event was lost: the test proves nothing"
    for client in (first, second):
        events = move_events(client, game_id)
        assert [uci for _, uci in events] == moves, client.name
        versions = [v for v, _ in events]
        assert versions == sorted(versions), client.name
        # Room versions are gapless (both players see every event of this game): none skipped.
        seen = [m["v"] for m in client.seen if m.get("v") is not None]
        assert seen == list(range(seen[0], seen[-1] + 1)), client.name
    _, stored = await finished_game(database, game_id)
    assert stored == moves
    for client in (first, second):
        await client.close()

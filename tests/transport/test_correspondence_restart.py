"""A correspondence game's deadline survives a restart (SQLite and PostgreSQL): the test's own
clock (``App(clock=)``) runs the hub and stamps the stored instants; after a stop at 23 h into
a 1-day turn and a restart, a move at 23 h 59 min is accepted and the other game's player who
does not move loses on time at exactly 24 h 00 min — once."""

from __future__ import annotations

import pytest
from support import SteppedClock
from ws_support import Client, OpenClient, StartApp, start_game

from server.app import App
from server.rules.time_control import DAY_MS

HOUR = 3_600_000
MINUTE = 60_000
T0 = SteppedClock().now  # 2026-11-29, ms since the epoch
DAY_TC = {"kind": "correspondence", "days": 1}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_restart_keeps_the_correspondence_deadline(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    clock = SteppedClock()
    app = await start_app(backend, clock=clock)
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bobby")
    moving = await start_game(alice, bob, tc=DAY_TC, colour="first")
    idle = await start_game(alice, bob, tc=DAY_TC, colour="first")
    for game in (moving, idle):
        clock.now += HOUR
        await game.play("a1b2")
        await game.play("a5a2")  # alice's turn starts now: its deadline is a day later
    turn_started = {moving.id: clock.now - HOUR, idle.id: clock.now}
    tokens = {alice.token, bob.token}
    clock.now = turn_started[moving.id] + 23 * HOUR
    await app.stop()

    clock.now += 30 * MINUTE  # the server is down half an hour: that counts too
    again = await start_app(database_url=app.settings.database_url, clock=clock)
    # Cold: not loaded at start (docs/correspondence.md "Memory"); a join loads each.
    assert all(again.hub.room(game_id) is None for game_id in turn_started)
    players: list[Client] = []
    for token in tokens:
        client = await open_client(again)
        assert token is not None
        await client.resume(token)
        for game_id in turn_started:
            await client.ok("join", {"game": game_id})
        players.append(client)
    for game_id, started in turn_started.items():
        room = again.hub.room(game_id)
        assert room is not None and room.clock.deadline() == started + DAY_MS
    first = next(c for c in players if c.hello and c.hello["d"]["player"]["name"] == "alice")
    second = next(c for c in players if c is not first)

    clock.now = turn_started[moving.id] + DAY_MS - MINUTE  # 23 h 59 min into the turn
    again.driver.check_deadlines()
    ack = await first.ok("move", {"game": moving.id, "ply": 3, "move": "b2c3"})
    assert ack == {"game": moving.id, "ply": 3}

    clock.now = turn_started[idle.id] + DAY_MS - 1
    again.driver.check_deadlines()
    await _sentinel(first)
    assert not _finished(again, idle.id)
    clock.now += 1  # 24 h 00 min
    again.driver.check_deadlines()
    for client in (first, second):
        end = await client.next(lambda m: m["t"] == "end" and m["d"]["game"] == idle.id)
        assert end["d"]["termination"] == "time" and end["d"]["winner"] == "second"
    stored = await again.store.get_game(idle.id)
    assert stored is not None and stored.status == "finished" and stored.termination == "time"
    assert not _finished(again, moving.id)
    again.driver.check_deadlines()
    await _sentinel(first)
    assert [m for m in first.seen if m["t"] == "end"] == [end]  # once


def _finished(app: App, game_id: str) -> bool:
    room = app.hub.room(game_id)
    return room is None or room.finished


async def _sentinel(client: Client) -> None:
    """Everything sent to ``client`` before this has arrived."""
    await client.ok("sought", {})

"""Cold correspondence games (docs/correspondence.md "Memory"): not loaded at start; loaded
from the store by the first command that names them (once, however many arrive meanwhile);
dropped from memory when idle and loaded again with the same state; a deadline due while the
game is not in memory ends it, once, even with two hubs firing it together.

The test's clock (``App(clock=)``) runs the hub and stamps the stored instants; with it the app
starts no timer of its own for cold games, so the tests call ``cold.fire_due()`` and
``cold.drop_idle()`` where the timer would."""

from __future__ import annotations

import asyncio

import pytest
from support import SteppedClock, poll
from ws_support import OpenClient, StartApp, start_game

from server.app import App
from server.rules.time_control import DAY_MS

HOUR = 3_600_000
DAY_TC = {"kind": "correspondence", "days": 1}


async def _two_moves_then_stop(
    backend: str, start_app: StartApp, open_client: OpenClient, clock: SteppedClock, **seek: bool
) -> tuple[App, str, dict[str, str]]:
    """A 1-day game between alice (first) and bobby, two moves played, the app stopped; the
    game id and both players' session tokens."""
    app = await start_app(backend, clock=clock)
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bobby")
    game = await start_game(alice, bob, tc=DAY_TC, colour="first", **seek)
    clock.now += HOUR
    await game.play("a1b2")
    await game.play("a5a2")  # alice's turn starts now
    assert alice.token is not None and bob.token is not None
    await app.stop()
    return app, game.id, {"alice": alice.token, "bobby": bob.token}


async def test_a_cold_game_loads_once_on_a_move_and_an_idle_room_leaves_and_comes_back(
    start_app: StartApp, open_client: OpenClient
) -> None:
    clock = SteppedClock()
    app, game_id, tokens = await _two_moves_then_stop("sqlite", start_app, open_client, clock)
    turn_started = clock.now
    clock.now += 2 * HOUR
    again = await start_app(database_url=app.settings.database_url, clock=clock)
    assert again.cold is not None and again.hub.room(game_id) is None  # not loaded at start
    alice, bob = await open_client(again), await open_client(again)
    await alice.resume(tokens["alice"])
    await bob.resume(tokens["bobby"])

    # A move (no join first) and a join arrive together: one load serves both.
    move, join = await asyncio.gather(
        alice.ok("move", {"game": game_id, "ply": 3, "move": "b2c3"}),
        bob.ok("join", {"game": game_id}),
    )
    assert move == {"game": game_id, "ply": 3} and join["game"] == game_id
    assert again.cold.reads == 1
    room = again.hub.room(game_id)
    assert room is not None and len(room.state.records) == 3
    moved_at = clock.now
    assert room.clock.deadline() == moved_at + DAY_MS  # bobby's turn, from the move
    assert turn_started < moved_at

    # Idle: nobody in the room and no event for correspondence_idle_s (600 s by default).
    await bob.ok("leave", {"game": game_id})
    assert again.cold.drop_idle() == 0  # first seen idle now
    clock.now += 600_000 - 1
    assert again.cold.drop_idle() == 0
    clock.now += 1
    assert again.cold.drop_idle() == 1
    assert bob.player is not None
    # Out of memory, still the players' game (their lists and the limit count it).
    assert again.hub.room(game_id) is None and game_id in again.hub.games_of(bob.player["id"])

    # Loaded again by the next look, with the same moves and deadline.
    snapshot = await bob.ok("join", {"game": game_id})
    assert snapshot["snapshot"] is True and again.cold.reads == 2
    room = again.hub.room(game_id)
    assert room is not None and [m.uci for m in room.state.records][-1] == "b2c3"
    assert room.clock.deadline() == moved_at + DAY_MS
    stored = await again.store.get_game(game_id)
    assert stored is not None and stored.status == "started"

    # A game that does not exist gets the usual answer through the same path.
    refused = await alice.request("move", {"game": "nosuchgame1", "ply": 1, "move": "a1b2"})
    assert refused["t"] == "error" and refused["d"]["code"] == "no_such_game"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_deadline_ends_a_game_never_loaded_once_with_two_hubs_firing_it(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    clock = SteppedClock()
    app, game_id, _ = await _two_moves_then_stop(
        backend, start_app, open_client, clock, rated=True
    )
    turn_started = clock.now
    url = app.settings.database_url
    clock.now = turn_started + DAY_MS - 1
    first = await start_app(database_url=url, clock=clock)
    assert first.cold is not None
    assert await first.cold.fire_due() == 0  # not due yet: nothing read, nothing loaded
    assert first.hub.room(game_id) is None

    clock.now = turn_started + DAY_MS  # 24 h 00 min
    second = await start_app(database_url=url, clock=clock)
    assert second.cold is not None
    await asyncio.gather(first.cold.fire_due(), second.cold.fire_due())
    stored = await poll(
        lambda: first.store.get_game(game_id), lambda g: g is not None and g.status == "finished"
    )
    assert stored is not None and stored.termination == "time" and stored.result == "0-1"
    # Rated once: each player's pool counts one game, whichever hub stored the end.
    for name in ("alice", "bobby"):
        player = await first.store.player_by_name(name)
        assert player is not None
        pools = await poll(lambda p=player.id: first.store.player_ratings(p))
        assert [(r.speed, r.games) for r in pools] == [("correspondence", 1)]
    assert await first.cold.fire_due() == 0  # over: never due again
    assert await first.store.due_correspondence(clock.now + 30 * DAY_MS) == []

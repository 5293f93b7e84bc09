"""Failures with real processes: the owner of a game killed with SIGKILL, Redis restarted.

Leases and heartbeats last 3 s here (``HUB_ENV``), so a takeover happens within seconds.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from cluster_support import (
    TIMEOUT,
    Client,
    LocalCluster,
    Msg,
    finished_game,
    move_events,
    pair,
    scripted_game,
    stored_game,
)
from room_view import RoomView

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def play(
    game_id: str, moves: list[str], plies: range, first: Client, second: Client
) -> list[int]:
    """Play ``moves[ply - 1]`` for each ply, retrying while the game's node is unreachable;
    return the plies acknowledged."""
    acked = []
    for ply in plies:
        mover = first if ply % 2 else second
        answer = await mover.retry("move", {"game": game_id, "ply": ply, "move": moves[ply - 1]})
        assert answer["t"] == "ack", f"ply {ply}: {answer}"
        assert answer["d"] == {"game": game_id, "ply": ply}
        acked.append(ply)
    return acked


def clocks_of(snapshot: Msg) -> tuple[int, int]:
    clocks = snapshot["d"]["clocks"]
    return clocks["first"]["ms"], clocks["second"]["ms"]


async def test_the_owner_killed_mid_game_the_game_finishes_on_a_survivor(
    cluster: LocalCluster,
) -> None:
    hub1, hub2, hub3 = cluster.hubs
    first = await Client.register(hub1.url, "first")
    second = await Client.register(hub2.url, "second")
    observer = await Client.register(hub3.url, "observer")
    game_id = await pair(first, second)  # the seek lived on hub1: hub1 owns the game
    await observer.ok("join", {"game": game_id})
    moves = scripted_game(seed=5)
    killed_at = 10
    acked = await play(game_id, moves, range(1, killed_at + 1), first, second)
    before = await observer.next(lambda m: m["t"] == "move" and m["d"]["ply"] == killed_at)

    await hub1.kill()
    try:
        outage_start = asyncio.get_running_loop().time()
        # The first player's socket died with hub1: reconnect through the public port.
        assert await first.closed()
        await first.reconnect(cluster.url)
        rejoined = await first.retry("join", {"game": game_id, "v": before["v"]})
        assert rejoined["t"] == "ack", rejoined
        outage = asyncio.get_running_loop().time() - outage_start
        snapshot = await first.next(lambda m: m["t"] == "game" and m["d"]["game"] == game_id)
        assert snapshot["d"]["moves"] == moves[:killed_at]  # no acknowledged move lost
        assert snapshot["d"]["status"] == "started"
        # Clocks continue where they were: the time without an owner was not charged.
        before_first, before_second = clocks_of(before)
        after_first, after_second = clocks_of(snapshot)
        assert outage > 2.5
        assert after_first >= before_first - 1500 and after_second >= before_second - 1500

        # The observer on hub3 follows the game to its new owner without doing anything.
        resumed = await observer.next(lambda m: m["t"] == "game" and m["v"] > before["v"])
        assert resumed["d"]["game"] == game_id and resumed["d"]["ply"] == killed_at
        acked += await play(game_id, moves, range(killed_at + 1, len(moves) + 1), first, second)
        for client in (first, second, observer):
            end = await client.next("end")
            assert end["d"]["termination"] == "checkmate"
        row, stored = await finished_game(cluster.database_url, game_id)
        assert stored == moves and acked == list(range(1, len(moves) + 1))
        assert row["status"] == "finished"
        assert [uci for _, uci in move_events(observer, game_id)] == moves
    finally:
        await hub1.start()  # back for the next test
    for client in (first, second, observer):
        await client.close()


async def test_a_players_node_killed_the_owner_counts_the_absence_until_the_return(
    cluster: LocalCluster,
) -> None:
    hub1, hub2, _ = cluster.hubs
    first = await Client.register(hub1.url, "stays")
    second = await Client.register(hub2.url, "drops")
    game_id = await pair(first, second)  # owned by hub1; the second player's home is hub2
    moves = scripted_game(seed=2)
    await play(game_id, moves, range(1, 5), first, second)

    await hub2.kill()
    try:
        # hub1 drops the connections of the dead node: the opponent is gone for the owner.
        gone = await first.next(lambda m: m["t"] == "gone" and m["d"]["game"] == game_id)
        assert gone["d"]["side"] == "second" and gone["d"]["claimable"] is False
        assert await second.closed()
        await second.reconnect(cluster.url)  # to a live node
        assert second.hello is not None and second.hello["d"]["game"] == game_id
        back = await first.next(lambda m: m["t"] == "back" and m["d"]["game"] == game_id)
        assert back["d"]["side"] == "second"
        joined = await second.ok("join", {"game": game_id})
        assert joined["game"] == game_id
        await play(game_id, moves, range(5, len(moves) + 1), first, second)
        assert (await second.next("end"))["d"]["termination"] == "checkmate"
        _, stored = await finished_game(cluster.database_url, game_id)
        assert stored == moves
    finally:
        await hub2.start()
    for client in (first, second):
        await client.close()


async def test_redis_restarted_mid_game(cluster: LocalCluster) -> None:
    assert cluster.redis is not None
    hub1, hub2, hub3 = cluster.hubs
    first = await Client.register(hub1.url, "first2")
    second = await Client.register(hub2.url, "second2")
    game_id = await pair(first, second)  # owned by hub1, where the first player is
    moves = scripted_game(seed=1)
    outage_ply = 10
    await play(game_id, moves, range(1, outage_ply + 1), first, second)

    await cluster.redis.kill()
    for client in (first, second):
        notice = await client.next("degraded")
        assert notice["d"] == {"on": True}
    # The owner keeps serving its game: the first player's move is stored and acknowledged.
    ply = outage_ply + 1
    own = await first.request("move", {"game": game_id, "ply": ply, "move": moves[ply - 1]})
    assert own["t"] == "ack", own
    _, stored = await stored_game(cluster.database_url, game_id)
    assert stored == moves[:ply]
    # The second player's node cannot reach the owner meanwhile, and says so.
    blocked = await second.request("move", {"game": game_id, "ply": ply + 1, "move": moves[ply]})
    assert blocked["t"] == "error" and blocked["d"]["code"] == "cluster_unavailable"
    # Nor can a node that never saw the game tell whether it exists: "cluster_unavailable"
    # (retry), not "no_such_game" for a game going on.
    watcher = await Client.register(hub3.url, "watcher2")
    unknown = await watcher.request("join", {"game": game_id})
    assert unknown["t"] == "error" and unknown["d"]["code"] == "cluster_unavailable", unknown
    await watcher.close()

    await cluster.redis.start()
    for client in (first, second):
        notice = await client.next("degraded", timeout=TIMEOUT * 2)
        assert notice["d"] == {"on": False}
    # The move made during the outage reaches the second player after the recovery.
    missed = await second.next(
        lambda m: (
            (m["t"] == "move" and m["d"]["ply"] == ply)
            or (m["t"] == "game" and m["d"]["ply"] >= ply)
        )
    )
    assert missed["d"]["game"] == game_id
    await play(game_id, moves, range(ply + 1, len(moves) + 1), first, second)
    for client in (first, second):
        assert (await client.next("end"))["d"]["termination"] == "checkmate"
    row, stored = await finished_game(cluster.database_url, game_id)
    assert stored == moves and row["status"] == "finished"
    for client in (first, second):
        await client.close()


async def test_every_follower_rebuilds_the_game_after_a_crash_and_a_graceful_takeover(
    cluster: LocalCluster,
) -> None:
    """Players and observers on every node, some away while things happen: the owner is killed
    (SIGKILL), later the new owner stops gracefully (SIGTERM); each takes the game to another
    node. Every client comes back with the last version it saw and must end with the stored
    moves, its versions gapless between snapshots."""
    hub1, hub2, hub3 = cluster.hubs
    first = await Client.register(hub1.url, "replay1")
    second = await Client.register(hub2.url, "replay2")
    game_id = await pair(first, second)  # hub1 owns the game
    homes = {"w2": hub2, "w3": hub3, "w1": hub1}
    watchers = {
        name: await Client.register(hub.url, f"replay{name}") for name, hub in homes.items()
    }
    for watcher in watchers.values():
        await watcher.ok("join", {"game": game_id})
    clients = {"first": first, "second": second, **watchers}
    moves = scripted_game(seed=1)
    assert len(moves) > 12

    async def caught_up(names: list[str], ply: int) -> None:
        for name in names:
            await clients[name].next(lambda m: m["t"] == "move" and m["d"]["ply"] == ply)

    async def come_back(name: str) -> Msg:
        client = clients[name]
        await client.reconnect(cluster.url)
        version = RoomView(game_id).apply_all(client.seen).version
        answer = await client.retry("join", {"game": game_id, "v": version})
        assert answer["t"] == "ack", answer
        return answer["d"]

    async def owner_of_game() -> Any:
        for hub in cluster.hubs:
            health = await hub.health() if hub.child.running else None
            if health is not None and health["cluster"]["owned_games"] > 0:
                return hub
        return None

    await play(game_id, moves, range(1, 3), first, second)
    await caught_up(list(watchers), 2)
    await watchers["w2"].close()  # away: misses what follows
    await play(game_id, moves, range(3, 5), first, second)
    await caught_up(["w1", "w3"], 4)
    stopped = []
    try:
        await hub1.kill()  # a crash of the owner: first and w1 lose their node too
        stopped.append(hub1)
        for name in ("first", "w1"):
            rejoined = await come_back(name)
            assert rejoined["snapshot"] is True  # the versions jumped: a flagged snapshot
        await play(game_id, moves, range(5, 7), first, second)
        await caught_up(["w1", "w3"], 6)
        await watchers["w3"].close()
        await play(game_id, moves, range(7, 9), first, second)
        await caught_up(["w1"], 8)

        owner = await owner_of_game()
        assert owner in (hub2, hub3)
        survivor = hub3 if owner is hub2 else hub2
        # Graceful: the stopping owner keeps the room's last version for the next owner, so
        # the versions go on without a jump when it hands over in time (else they jump, as
        # after a crash, and the clients get a snapshot: never a partial replay).
        await owner.stop()
        stopped.append(owner)
        for name, client in clients.items():
            if name in ("w2", "w3"):
                continue
            if await client.closed(timeout=0.5):  # its home node was the one stopped
                await come_back(name)
        await play(game_id, moves, range(9, 11), first, second)
        await caught_up(["first", "second", "w1"], 10)
        assert survivor.child.running
    finally:
        for hub in stopped:
            await hub.start()  # back for the next test
    for name in ("w2", "w3"):
        await come_back(name)  # the ack follows the replay or the snapshot
    _, stored = await stored_game(cluster.database_url, game_id)
    assert stored == moves[:10]
    for name, client in clients.items():
        view = RoomView(game_id).apply_all(client.seen)
        assert view.moves == stored, f"{name}: {view.moves}"
        assert view.breaks == [], f"{name}: {view.breaks}"
        await client.close()

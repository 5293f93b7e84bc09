"""A node taken for dead while it lives (its heartbeat late past the presence TTL: a loop
stalled, or the heartbeat queued behind a burst of seek updates, as at the cluster storm's
start-up), with real processes.

The owner of a game drops the connections of a node it sees dead; the players there keep their
sockets and wait in the game. When that node's next heartbeat finds it had lapsed, it re-joins
the games its connections follow on other nodes, from the last version they saw. Without that,
the game's events never reached them again: in the cluster storm both players of 52–125 games
waited for ever at ply 0 or 1 (the owner had even aborted the game meanwhile, unseen).
"""

from __future__ import annotations

import os
import signal

import pytest
from cluster_support import Client, LocalCluster, pair, scripted_game

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_node_taken_for_dead_re_joins_its_players_games(cluster: LocalCluster) -> None:
    hub1, hub2, _ = cluster.hubs
    first = await Client.register(hub1.url, "lapse-first")
    second = await Client.register(hub2.url, "lapse-second")
    game_id = await pair(first, second)  # owned by hub1; the second player's home is hub2
    moves = scripted_game(seed=7)
    await first.ok("move", {"game": game_id, "ply": 1, "move": moves[0]})
    await second.next(lambda m: m["t"] == "move" and m["d"]["ply"] == 1)

    pid = hub2.child.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # hub2 misses its heartbeats: its node key lapses
    try:
        # hub1 sees hub2 dead and drops its connections: the second player is gone there.
        gone = await first.next(lambda m: m["t"] == "gone" and m["d"]["game"] == game_id)
        assert gone["d"]["side"] == "second"
    finally:
        os.kill(pid, signal.SIGCONT)
    # hub2 lives on: its player is back in the game without doing anything ...
    back = await first.next(lambda m: m["t"] == "back" and m["d"]["game"] == game_id)
    assert back["d"]["side"] == "second"
    # ... and gets the game's events again.
    answer = await second.retry("move", {"game": game_id, "ply": 2, "move": moves[1]})
    assert answer["t"] == "ack", answer
    await first.next(lambda m: m["t"] == "move" and m["d"]["ply"] == 2)
    await first.ok("move", {"game": game_id, "ply": 3, "move": moves[2]})
    seen = await second.next(lambda m: m["t"] == "move" and m["d"]["ply"] == 3)
    assert seen["d"]["uci"] == moves[2]
    for client in (first, second):
        await client.close()

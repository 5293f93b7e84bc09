"""Cluster primitives (leases, seeks, presence) in process and over real Redis.

Each simulated node gets its own Cluster handle (its own Redis connections) over one shared
state, so races below really cross connections. Nothing sleeps through a TTL: time passes on
demand (``make_cluster.elapse``: a fake clock in memory, expiries brought nearer in Redis).
"""

import asyncio
import json

import pytest
from bus_support import ClusterFactory

from server.bus import GameRole, NodeNotLiveError, PresenceChanges
from server.bus.state_redis import LEASE_BATCH

TTL = 60_000
# Time passes on demand, so the short ttl need not be short in real time: far longer than a
# slow test's own steps (real time passes in Redis too), far shorter than TTL.
SHORT_TTL = 5_000  # ms; the tests let time pass beyond it
PAST_SHORT_TTL = 6_000  # ms
KEEP_TTL = 4_000  # ms; renewed every second for 6 s in all, longer than one ttl


def seek(**fields: object) -> str:
    return json.dumps({"variant": "minishogi", **fields})


# -- game leases ---------------------------------------------------------------------------


async def test_lease_acquire_renew_release(make_cluster: ClusterFactory) -> None:
    node_a, node_b = make_cluster(), make_cluster()
    assert await node_a.leases.owner("g1") is None
    assert await node_a.leases.acquire("g1", "node-a", TTL)
    assert await node_b.leases.owner("g1") == "node-a"
    assert not await node_b.leases.acquire("g1", "node-b", TTL)
    assert await node_a.leases.acquire("g1", "node-a", TTL)  # re-entrant for the holder
    assert await node_a.leases.renew("g1", "node-a", TTL)
    assert not await node_b.leases.renew("g1", "node-b", TTL)
    assert not await node_b.leases.release("g1", "node-b")
    assert await node_b.leases.owner("g1") == "node-a"
    assert await node_a.leases.release("g1", "node-a")
    assert not await node_a.leases.release("g1", "node-a")
    assert await node_b.leases.owner("g1") is None
    assert await node_b.leases.acquire("g1", "node-b", TTL)
    assert not await node_a.leases.renew("g1", "node-a", TTL)


async def test_lease_expires_and_another_node_takes_over(make_cluster: ClusterFactory) -> None:
    node_a, node_b = make_cluster(), make_cluster()
    assert await node_a.leases.acquire("g1", "node-a", SHORT_TTL)
    assert not await node_b.leases.acquire("g1", "node-b", TTL)
    await make_cluster.elapse(SHORT_TTL // 2)
    assert await node_b.leases.owner("g1") == "node-a"  # not yet
    await make_cluster.elapse(PAST_SHORT_TTL - SHORT_TTL // 2)
    assert await node_b.leases.owner("g1") is None
    assert not await node_a.leases.renew("g1", "node-a", TTL)  # too late to renew
    assert await node_b.leases.acquire("g1", "node-b", TTL)
    assert await node_a.leases.owner("g1") == "node-b"
    assert not await node_a.leases.acquire("g1", "node-a", TTL)


async def test_renewal_keeps_a_lease_alive(make_cluster: ClusterFactory) -> None:
    node_a, node_b = make_cluster(), make_cluster()
    assert await node_a.leases.acquire("g1", "node-a", KEEP_TTL)
    for _ in range(6):
        await make_cluster.elapse(1_000)
        assert await node_a.leases.renew("g1", "node-a", KEEP_TTL)
    assert await node_b.leases.owner("g1") == "node-a"
    await make_cluster.elapse(KEEP_TTL + 1)  # renewals stop: it lapses one ttl later
    assert await node_b.leases.owner("g1") is None


async def test_leases_held_released_and_looked_up_in_batches(
    make_cluster: ClusterFactory,
) -> None:
    """``hold_many`` renews the node's leases and takes the free ones, in chunks of
    ``LEASE_BATCH`` in Redis (1,100 leases: three), and names those another node holds."""
    node_a, node_b = make_cluster(), make_cluster()
    games = [f"g{i:04d}" for i in range(LEASE_BATCH * 2 + 100)]
    ours, theirs = games[:700], set(games[700::3])
    for game_id in ours:
        assert await node_a.leases.acquire(game_id, "node-a", SHORT_TTL)
    for game_id in theirs:
        assert await node_b.leases.acquire(game_id, "node-b", TTL)
    await make_cluster.elapse(SHORT_TTL // 2)

    assert await node_a.leases.hold_many(games, "node-a", KEEP_TTL) == theirs
    await make_cluster.elapse(SHORT_TTL // 2 + 1)  # the first acquires would have lapsed
    owners = await node_b.leases.owners(games)
    assert owners == ["node-b" if g in theirs else "node-a" for g in games]
    await make_cluster.elapse(KEEP_TTL)  # ... and the renewals too
    assert await node_b.leases.owners(games[:2]) == [None, None]
    assert await node_a.leases.hold_many([], "node-a", KEEP_TTL) == set()

    await node_a.leases.hold_many(games, "node-a", TTL)
    assert await node_a.leases.release_many(games, "node-a") == len(games) - len(theirs)
    assert await node_a.leases.release_many(games, "node-a") == 0
    owners = await node_a.leases.owners(games)
    assert owners == ["node-b" if g in theirs else None for g in games]
    assert await node_a.leases.owners([]) == []
    with pytest.raises(ValueError):
        await node_a.leases.hold_many(["g1", ""], "node-a", TTL)


async def test_lease_race_has_one_winner(make_cluster: ClusterFactory) -> None:
    nodes = [make_cluster() for _ in range(10)]
    results = await asyncio.gather(
        *(node.leases.acquire("g1", f"node-{i}", TTL) for i, node in enumerate(nodes))
    )
    assert results.count(True) == 1
    assert await nodes[0].leases.owner("g1") == f"node-{results.index(True)}"


# -- seeks ----------------------------------------------------------------------------------


async def test_seek_add_list_get_remove(make_cluster: ClusterFactory) -> None:
    node_a, node_b = make_cluster(), make_cluster()
    await node_a.presence.heartbeat("node-a", TTL)
    await node_b.presence.heartbeat("node-b", TTL)
    assert await node_a.seeks.add("s1", seek(time=300), "node-a")
    assert await node_b.seeks.add("s2", seek(time=60), "node-b")
    assert not await node_b.seeks.add("s1", seek(time=1), "node-b")  # id taken
    assert await node_b.seeks.all() == {"s1": seek(time=300), "s2": seek(time=60)}
    assert await node_b.seeks.get("s1") == seek(time=300)
    assert await node_b.seeks.get("nope") is None
    assert await node_a.seeks.remove("s1")
    assert not await node_a.seeks.remove("s1")
    assert await node_a.seeks.all() == {"s2": seek(time=60)}
    assert await node_a.seeks.claimant("s1") is None


async def test_seek_claim_race_has_exactly_one_winner(make_cluster: ClusterFactory) -> None:
    owner = make_cluster()
    await owner.presence.heartbeat("node-a", TTL)
    claimers = [make_cluster() for _ in range(8)]
    for round_ in range(5):
        seek_id = f"s{round_}"
        assert await owner.seeks.add(seek_id, seek(), "node-a")
        results = await asyncio.gather(
            *(
                node.seeks.claim(seek_id, f"player-{i}-{j}")
                for i, node in enumerate(claimers)
                for j in range(5)
            )
        )
        assert results.count(True) == 1
        winner = results.index(True)
        assert await owner.seeks.claimant(seek_id) == f"player-{winner // 5}-{winner % 5}"
        assert await owner.seeks.get(seek_id) is None
        assert seek_id not in await owner.seeks.all()
        assert not await owner.seeks.add(seek_id, seek(), "node-a")  # a taken id stays taken


async def test_withdraw_and_claim_race_has_one_winner(make_cluster: ClusterFactory) -> None:
    seeker, acceptor = make_cluster(), make_cluster()
    await seeker.presence.heartbeat("node-a", TTL)
    for round_ in range(20):
        seek_id = f"s{round_}"
        assert await seeker.seeks.add(seek_id, seek(), "node-a")
        withdrawn, claimed = await asyncio.gather(
            seeker.seeks.remove(seek_id), acceptor.seeks.claim(seek_id, "bob")
        )
        assert withdrawn != claimed
        assert (await acceptor.seeks.claimant(seek_id) == "bob") == claimed


async def test_claim_of_unknown_seek_fails(make_cluster: ClusterFactory) -> None:
    cluster = make_cluster()
    assert not await cluster.seeks.claim("ghost", "bob")
    assert await cluster.seeks.claimant("ghost") is None


async def test_claim_expires(make_cluster: ClusterFactory) -> None:
    cluster = make_cluster()
    await cluster.presence.heartbeat("node-a", TTL)
    assert await cluster.seeks.add("s1", seek(), "node-a")
    assert await cluster.seeks.claim("s1", "bob", ttl_ms=SHORT_TTL)
    assert await cluster.seeks.claimant("s1") == "bob"
    await make_cluster.elapse(PAST_SHORT_TTL)
    assert await cluster.seeks.claimant("s1") is None


async def test_seeks_of_a_lapsed_node_vanish(make_cluster: ClusterFactory) -> None:
    node_a, node_b = make_cluster(), make_cluster()
    await node_a.presence.heartbeat("node-a", SHORT_TTL)
    await node_b.presence.heartbeat("node-b", TTL)
    assert await node_a.seeks.add("s1", seek(), "node-a")
    assert await node_b.seeks.add("s2", seek(), "node-b")
    await make_cluster.elapse(PAST_SHORT_TTL)
    assert await node_b.seeks.get("s1") is None
    assert not await node_b.seeks.claim("s1", "bob")
    assert await node_b.seeks.all() == {"s2": seek()}
    # The node comes back: it learns it had lapsed, and its old seeks stay gone.
    assert not await node_a.presence.heartbeat("node-a", TTL)
    assert await node_b.seeks.all() == {"s2": seek()}


async def test_lapsed_node_that_returns_before_anyone_looked_loses_its_seeks(
    make_cluster: ClusterFactory,
) -> None:
    cluster = make_cluster()
    await cluster.presence.heartbeat("node-a", SHORT_TTL)
    assert await cluster.seeks.add("s1", seek(), "node-a")
    await make_cluster.elapse(PAST_SHORT_TTL)
    assert not await cluster.presence.heartbeat("node-a", TTL)
    assert await cluster.seeks.all() == {}
    assert await cluster.seeks.add("s1", seek(), "node-a")  # re-announced


async def test_seek_needs_a_live_node_and_json(make_cluster: ClusterFactory) -> None:
    cluster = make_cluster()
    with pytest.raises(NodeNotLiveError, match="node-x"):
        await cluster.seeks.add("s1", seek(), "node-x")
    await cluster.presence.heartbeat("node-x", TTL)
    with pytest.raises(ValueError, match="JSON"):
        await cluster.seeks.add("s1", "{not json", "node-x")
    assert await cluster.seeks.all() == {}


# -- presence -------------------------------------------------------------------------------


async def test_presence_across_nodes(make_cluster: ClusterFactory) -> None:
    node_a, node_b = make_cluster(), make_cluster()
    assert not await node_a.presence.set_online("alice", "node-a", TTL)  # first heartbeat
    assert await node_a.presence.set_online("bob", "node-a", TTL)
    await node_b.presence.set_online("carol", "node-b", TTL)
    await node_b.presence.set_online("alice", "node-b", TTL)  # second tab elsewhere
    assert await node_a.presence.online_players() == {"alice", "bob", "carol"}
    assert await node_b.presence.live_nodes() == {"node-a", "node-b"}
    await node_a.presence.set_offline("alice", "node-a")
    assert await node_b.presence.is_online("alice")  # still on node-b
    await node_b.presence.set_offline("alice", "node-b")
    assert not await node_a.presence.is_online("alice")
    assert await node_a.presence.online_players() == {"bob", "carol"}


async def test_presence_of_a_dead_node_expires(make_cluster: ClusterFactory) -> None:
    node_a, node_b = make_cluster(), make_cluster()
    await node_a.presence.set_online("alice", "node-a", SHORT_TTL)
    await node_a.presence.add_game("alice", "node-a", "g1", GameRole.PLAYING)
    await node_b.presence.set_online("bob", "node-b", TTL)
    assert await node_b.presence.online_players() == {"alice", "bob"}
    await make_cluster.elapse(PAST_SHORT_TTL)  # node-a stops heartbeating: it died
    assert await node_b.presence.online_players() == {"bob"}
    assert not await node_b.presence.is_online("alice")
    assert await node_b.presence.games_of("alice") == {}
    assert await node_b.presence.live_nodes() == {"node-b"}


async def test_heartbeats_keep_presence(make_cluster: ClusterFactory) -> None:
    cluster = make_cluster()
    await cluster.presence.set_online("alice", "node-a", KEEP_TTL)
    for _ in range(6):
        await make_cluster.elapse(1_000)
        assert await cluster.presence.heartbeat("node-a", KEEP_TTL)
    assert await cluster.presence.online_players() == {"alice"}
    await make_cluster.elapse(KEEP_TTL + 1)  # heartbeats stop: the player goes with the node
    assert await cluster.presence.online_players() == set()


async def test_games_played_and_watched(make_cluster: ClusterFactory) -> None:
    node_a, node_b = make_cluster(), make_cluster()
    await node_a.presence.set_online("alice", "node-a", TTL)
    await node_b.presence.set_online("alice", "node-b", TTL)
    await node_a.presence.add_game("alice", "node-a", "g1", GameRole.PLAYING)
    await node_a.presence.add_game("alice", "node-a", "g2", GameRole.WATCHING)
    await node_b.presence.add_game("alice", "node-b", "g2", GameRole.PLAYING)
    await node_b.presence.add_game("alice", "node-b", "g3", GameRole.WATCHING)
    assert await node_a.presence.games_of("alice") == {
        "g1": GameRole.PLAYING,
        "g2": GameRole.PLAYING,  # playing beats watching
        "g3": GameRole.WATCHING,
    }
    await node_b.presence.remove_game("alice", "node-b", "g2")
    assert (await node_a.presence.games_of("alice"))["g2"] is GameRole.WATCHING
    await node_a.presence.set_offline("alice", "node-a")  # its games through node-a go too
    assert await node_b.presence.games_of("alice") == {"g3": GameRole.WATCHING}
    assert await node_b.presence.games_of("nobody") == {}


async def test_announce_makes_the_single_calls_changes_in_one_batch(
    make_cluster: ClusterFactory,
) -> None:
    """``announce``: a heartbeat (its answer returned), then players online, offline (their
    games here go), games added and removed — 1,300 changes: three script calls in Redis."""
    node_a, node_b = make_cluster(), make_cluster()
    players = [f"p{i:04d}" for i in range(1_000)]
    first = PresenceChanges(
        online=players,
        games=[("p0001", "g1", GameRole.PLAYING), ("p0002", "g1", GameRole.PLAYING)]
        + [(p, "g2", GameRole.WATCHING) for p in players[:300]],
    )
    assert not await node_a.presence.announce("node-a", SHORT_TTL, first)  # not live before
    assert await node_b.presence.online_players() == set(players)
    assert await node_b.presence.games_of("p0001") == {
        "g1": GameRole.PLAYING,
        "g2": GameRole.WATCHING,
    }
    second = PresenceChanges(
        online=["late"],
        offline=["p0001", "p0003"],
        games=[("p0001", "g1", GameRole.PLAYING), ("late", "g2", GameRole.WATCHING)],
        gone=[("p0002", "g2"), ("p0004", "g2")],
    )
    assert await node_a.presence.announce("node-a", SHORT_TTL, second)
    online = await node_b.presence.online_players()
    assert "late" in online and "p0001" not in online and len(online) == 999
    assert await node_b.presence.games_of("p0001") == {"g1": GameRole.PLAYING}  # again
    assert await node_b.presence.games_of("p0002") == {"g1": GameRole.PLAYING}
    assert await node_b.presence.games_of("p0003") == {}
    assert await node_b.presence.games_of("p0004") == {}
    assert await node_b.presence.games_of("late") == {"g2": GameRole.WATCHING}

    await make_cluster.elapse(SHORT_TTL // 2)
    assert await node_a.presence.announce("node-a", SHORT_TTL, PresenceChanges())  # heartbeat
    await make_cluster.elapse(SHORT_TTL // 2 + 1)
    assert "late" in await node_b.presence.online_players()
    await make_cluster.elapse(SHORT_TTL)  # no more heartbeats: everything goes with the node
    assert await node_b.presence.online_players() == set()
    assert not await node_a.presence.announce("node-a", TTL, PresenceChanges(online=["x"]))
    assert await node_b.presence.online_players() == {"x"}
    assert await node_b.presence.games_of("p0002") == {}


async def test_add_game_needs_a_live_node(make_cluster: ClusterFactory) -> None:
    cluster = make_cluster()
    with pytest.raises(NodeNotLiveError):
        await cluster.presence.add_game("alice", "node-z", "g1", GameRole.WATCHING)
    with pytest.raises(ValueError):
        await cluster.presence.add_game("alice", "node-z", "g1", "spectating")  # type: ignore[arg-type]


async def test_node_down_removes_everything_at_once(make_cluster: ClusterFactory) -> None:
    node_a, node_b = make_cluster(), make_cluster()
    await node_a.presence.set_online("alice", "node-a", TTL)
    await node_a.presence.add_game("alice", "node-a", "g1", GameRole.PLAYING)
    assert await node_a.seeks.add("s1", seek(), "node-a")
    await node_b.presence.set_online("bob", "node-b", TTL)
    await node_a.presence.node_down("node-a")
    assert await node_b.presence.online_players() == {"bob"}
    assert await node_b.presence.games_of("alice") == {}
    assert await node_b.seeks.all() == {}
    assert await node_b.presence.live_nodes() == {"node-b"}


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda c: c.leases.acquire("g1", "node:a", TTL), ValueError),
        (lambda c: c.leases.acquire("g1", "node-a", 0), ValueError),
        (lambda c: c.leases.acquire("g1", "node-a", 1.5), TypeError),
        (lambda c: c.leases.acquire("", "node-a", TTL), ValueError),
        (lambda c: c.leases.owner(7), TypeError),
        (lambda c: c.seeks.claim("s1", "", TTL), ValueError),
        (lambda c: c.seeks.add("s1", b"{}", "node-a"), TypeError),
        (lambda c: c.presence.heartbeat("", TTL), ValueError),
        (lambda c: c.presence.set_online("x" * 300, "node-a", TTL), ValueError),
        (lambda c: c.presence.heartbeat("node-a", True), TypeError),
        (lambda c: c.presence.announce("node-a", TTL, PresenceChanges(offline=[""])), ValueError),
        (
            lambda c: c.presence.announce(
                "node-a", TTL, PresenceChanges(games=[("alice", "g1", "spectating")])
            ),
            ValueError,
        ),
    ],
)
async def test_bad_arguments_change_nothing(
    make_cluster: ClusterFactory, call: object, error: type[Exception]
) -> None:
    cluster = make_cluster()
    assert callable(call)
    with pytest.raises(error):
        await call(cluster)
    assert await cluster.leases.owner("g1") is None
    assert await cluster.presence.live_nodes() == set()

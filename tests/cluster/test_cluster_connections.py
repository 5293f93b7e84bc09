"""The node's registries of connections: its own (``server.cluster.connections``: the index of
the remote games each connection follows, which a takeover's re-join reads instead of walking
every connection) and the other nodes' attached to its hub (``server.cluster.remote``: a dead
node's leave a step at a time)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import cast

import pytest

from server.bus import Cluster
from server.cluster.connections import EndedGames, LocalConnection, LocalConnections
from server.cluster.host import Host
from server.cluster.liveness import Liveness
from server.cluster.outgoing import Sender
from server.cluster.ownership import Ownership
from server.cluster.remote import DROP_STEP, RemoteConnections
from server.cluster.shared import Shared
from server.hub.effects import ConnId, GameId
from server.hub.identity import PlayerId, PlayerInfo
from server.transport.driver_ports import Peer


def local(player: str) -> LocalConnection:
    return LocalConnection(PlayerInfo(PlayerId(player), player), cast(Peer, None), pending=deque())


def test_followers_are_indexed_by_game_until_they_leave_or_close() -> None:
    conns = LocalConnections()
    a, b, c = local("u1"), local("u2"), local("u1")
    for conn_id, conn in ((1, a), (2, b), (3, c)):
        conns.add(ConnId(conn_id), conn)
    g, h = GameId("g"), GameId("h")
    follow = conns.follow(ConnId(1), a, g, "hub2")
    assert a.follows[g] is follow and follow.node == "hub2" and follow.version == 0
    conns.follow(ConnId(2), b, g, "hub2")
    conns.follow(ConnId(2), b, h, "hub3")
    assert sorted(c for c, _ in conns.followers(g)) == [1, 2]
    assert conns.followers(h) == [(ConnId(2), b)]
    # Following again (the game moved to another node) replaces the Follow, one entry each.
    again = conns.follow(ConnId(1), a, g, "hub3")
    assert a.follows[g] is again and sorted(c for c, _ in conns.followers(g)) == [1, 2]

    conns.unfollow(ConnId(1), a, g)
    assert g not in a.follows and conns.followers(g) == [(ConnId(2), b)]
    conns.unfollow(ConnId(1), a, g)  # not following: nothing happens
    assert conns.remove(ConnId(2)) is b
    assert conns.followers(g) == [] and conns.followers(h) == []

    assert sorted(c for c, _ in conns.of_player(PlayerId("u1"))) == [1, 3]
    assert conns.of_player(PlayerId("u2")) == []


class _Hub:
    def __init__(self) -> None:
        self.connected: set[ConnId] = set()

    def connect(self, conn_id: ConnId, player: PlayerInfo, now: int) -> None:
        self.connected.add(conn_id)

    def disconnect(self, conn_id: ConnId, now: int) -> None:
        self.connected.discard(conn_id)

    def stored_challenges(self, player_id: str) -> list[object]:
        return []


class _Host:
    """What attaching and detaching use of the node's :class:`~server.cluster.host.Host`."""

    def __init__(self) -> None:
        self.hub = _Hub()
        self._next = 1000

    def new_conn_id(self) -> ConnId:
        self._next += 1
        return ConnId(self._next)

    def call(self, step: Callable[[int], object]) -> None:
        step(0)


def test_a_dead_nodes_connections_leave_a_step_at_a_time_and_one_back_in_time_stays() -> None:
    host = _Host()
    remotes = RemoteConnections(
        Shared(
            cast(Host, host),
            cast(Cluster, None),
            LocalConnections(),
            EndedGames(),
            cast(Ownership, None),
            cast(Liveness, None),
            cast(Sender, None),
        )
    )
    player = PlayerInfo(PlayerId("u1"), "u1")
    dead = [remotes.attach("hub2", ConnId(n), player) for n in range(2 * DROP_STEP + 10)]
    other = remotes.attach("hub3", ConnId(1), player)
    assert host.hub.connected == {*dead, other}

    dropping = remotes.drop_node("hub2")
    dropping.send(None)  # the first step, up to its yield to the loop
    assert len(host.hub.connected & set(dead)) == DROP_STEP + 10
    # A connection of hub2 attached again before its turn (hub2 was back): it stays.
    back = ConnId(2 * DROP_STEP + 5)
    assert remotes.attach("hub2", back, player) == dead[2 * DROP_STEP + 5]
    with pytest.raises(StopIteration):
        while True:
            dropping.send(None)
    assert host.hub.connected == {dead[2 * DROP_STEP + 5], other}
    assert remotes.nodes() == {"hub2", "hub3"}

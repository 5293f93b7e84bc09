"""The node's registry of its connections (``server.cluster.connections``): the index of the
remote games each connection follows, which a takeover's re-join reads instead of walking every
connection (issue 25)."""

from __future__ import annotations

from collections import deque
from typing import cast

from server.cluster.connections import LocalConnection, LocalConnections
from server.hub.effects import ConnId, GameId
from server.hub.identity import PlayerId, PlayerInfo
from server.transport.driver import Peer


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

"""The node's presence announcements (``Announcer``): the differences with what it announced
before, in one batch, and everything again after the node's heartbeat lapsed. The cluster state
is the in-process one on a fake clock, so a lapse needs no sleep."""

from __future__ import annotations

from support import FakeClock

from server.bus import Cluster, GameRole, InProcessClusterState
from server.cluster.presence import Announcer

TTL_MS = 3_000
PLAYING, WATCHING = GameRole.PLAYING, GameRole.WATCHING


async def test_differences_are_announced_and_a_lapse_announces_everything_again() -> None:
    clock = FakeClock()
    presence = Cluster.in_process(InProcessClusterState(clock=clock)).presence
    lapses: list[int] = []

    async def relist() -> None:
        lapses.append(len(lapses))

    announcer = Announcer(presence, "node-a", TTL_MS, relist)
    # The owner announces both players of its game; only u1 is connected here.
    await announcer.sync(({"u1", "u3"}, {("u1", "g1"): PLAYING, ("u2", "g1"): PLAYING}))
    assert lapses == [0]  # the first heartbeat: the node was not live
    assert await presence.online_players() == {"u1", "u3"}
    assert await presence.games_of("u2") == {"g1": PLAYING}

    # u1 leaves (its games announced here go with it, but g1 is still wanted), u3 watches g2.
    await announcer.sync(({"u3"}, {("u1", "g1"): PLAYING, ("u3", "g2"): WATCHING}))
    assert await presence.online_players() == {"u3"}
    assert await presence.games_of("u1") == {"g1": PLAYING}
    assert await presence.games_of("u2") == {}
    assert await presence.games_of("u3") == {"g2": WATCHING}

    clock.advance(2 * TTL_MS / 1000)  # the node stalled past its TTL: all it announced lapsed
    assert await presence.online_players() == set()
    # The next change finds the node not live: everything is announced again.
    await announcer.sync(({"u3", "u4"}, {("u1", "g1"): PLAYING, ("u3", "g2"): WATCHING}))
    assert lapses == [0, 1]
    assert await presence.online_players() == {"u3", "u4"}
    assert await presence.games_of("u1") == {"g1": PLAYING}
    assert await presence.games_of("u3") == {"g2": WATCHING}

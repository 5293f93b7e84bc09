"""The connections whose websockets are on this node, and the games this node saw end.

Every part of the node reads these: routing queues a connection's commands, forwarding follows
the remote games it receives events of, presence announces its player.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from server.hub.commands import Command
from server.hub.effects import ConnId, GameId
from server.hub.identity import PlayerId, PlayerInfo
from server.transport.driver_ports import Peer

__all__ = ["EndedGames", "Follow", "LocalConnection", "LocalConnections"]

ENDED_MEMORY = 10_000
ENDED_MEMORY_S = 600.0


@dataclass
class Follow:
    """A remote game a local connection receives events of.

    ``version`` is the last room event passed on, with every earlier one sent to the connection
    passed on too; ``resyncing`` is set while the events after it are asked for again.
    """

    node: str
    version: int = 0
    finished: bool = False
    resyncing: bool = False


@dataclass
class LocalConnection:
    """A connection whose websocket is on this node.

    ``pending`` holds the commands waiting behind an asynchronous routing lookup (None when
    nothing waits); ``attached`` the nodes whose hubs know this connection; ``challenges`` the
    node of each challenge it received.
    """

    player: PlayerInfo
    peer: Peer
    connected: bool = False
    closed: bool = False
    pending: deque[tuple[Command, int]] | None = None
    attached: set[str] = field(default_factory=set)
    follows: dict[GameId, Follow] = field(default_factory=dict)
    challenges: dict[int, str] = field(default_factory=dict)


class LocalConnections:
    """This node's connections, by id, by player, by lower-case player name and by the remote
    games they follow."""

    def __init__(self) -> None:
        self._by_conn: dict[ConnId, LocalConnection] = {}
        self._player_conns: dict[PlayerId, set[ConnId]] = {}
        self._names: dict[str, PlayerId] = {}
        self._followers: dict[GameId, set[ConnId]] = {}
        """Game -> the connections with a :class:`Follow` of it: a takeover re-joins a game's
        followers, and walking every connection for each of a storm's hundreds of takeovers
        held a survivor's loop 3 ms a game (before 1a8f862)."""

    def __len__(self) -> int:
        return len(self._by_conn)

    def items(self) -> Iterator[tuple[ConnId, LocalConnection]]:
        return iter(list(self._by_conn.items()))

    def get(self, conn_id: ConnId) -> LocalConnection | None:
        return self._by_conn.get(conn_id)

    def add(self, conn_id: ConnId, local: LocalConnection) -> None:
        self._by_conn[conn_id] = local
        self._player_conns.setdefault(local.player.id, set()).add(conn_id)
        self._names.setdefault(local.player.name.lower(), local.player.id)  # first keeps it

    def remove(self, conn_id: ConnId) -> LocalConnection | None:
        local = self._by_conn.pop(conn_id, None)
        if local is None:
            return None
        for game_id in local.follows:
            self._unindex(game_id, conn_id)
        player = local.player
        conns = self._player_conns.get(player.id, set())
        conns.discard(conn_id)
        if not conns:
            self._player_conns.pop(player.id, None)
            if self._names.get(player.name.lower()) == player.id:
                del self._names[player.name.lower()]
        return local

    def follow(self, conn_id: ConnId, local: LocalConnection, game_id: GameId, node: str) -> Follow:
        """Start (or start again) following ``game_id``, run by ``node``, on ``conn_id``."""
        follow = local.follows[game_id] = Follow(node)
        self._followers.setdefault(game_id, set()).add(conn_id)
        return follow

    def unfollow(self, conn_id: ConnId, local: LocalConnection, game_id: GameId) -> None:
        """Stop following ``game_id`` on ``conn_id`` (it left the game)."""
        if local.follows.pop(game_id, None) is not None:
            self._unindex(game_id, conn_id)

    def followers(self, game_id: GameId) -> list[tuple[ConnId, LocalConnection]]:
        """The connections here that follow ``game_id``."""
        return [(c, self._by_conn[c]) for c in self._followers.get(game_id, ())]

    def of_player(self, player_id: PlayerId) -> list[tuple[ConnId, LocalConnection]]:
        """The connections here of ``player_id``."""
        return [(c, self._by_conn[c]) for c in self._player_conns.get(player_id, ())]

    def _unindex(self, game_id: GameId, conn_id: ConnId) -> None:
        conns = self._followers.get(game_id)
        if conns is not None:
            conns.discard(conn_id)
            if not conns:
                del self._followers[game_id]

    def has_name(self, name: str) -> bool:
        """Whether a player named ``name`` (lower case) is connected here."""
        return name in self._names

    def connected_conn_of(self, player_id: PlayerId) -> ConnId | None:
        """A connection of ``player_id`` that has joined the hub, if any."""
        for conn_id in self._player_conns.get(player_id, ()):
            if self._by_conn[conn_id].connected:
                return conn_id
        return None


class EndedGames:
    """The games this node has seen end, for a while: presence may still list them as played
    until their owner updates it."""

    def __init__(self) -> None:
        self._ended: dict[GameId, float] = {}

    def __contains__(self, game_id: object) -> bool:
        return game_id in self._ended

    def saw_end(self, game_id: GameId) -> None:
        now = time.monotonic()
        self._ended[game_id] = now
        if len(self._ended) > ENDED_MEMORY:
            for old in [g for g, at in self._ended.items() if now - at > ENDED_MEMORY_S]:
                del self._ended[old]

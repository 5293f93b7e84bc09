"""What the hub holds (connections, players, lobby books, rooms, timers, persist tokens) and
the helpers every part of it uses (sending to a player, lobby broadcasts, freeing a player's seeks
and challenges). The parts build on it: :mod:`server.hub.hub_games` → :mod:`server.hub.hub_lobby`
→ :mod:`server.hub.hub_rooms` → :class:`server.hub.hub.Hub`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from server.hub.effects import Broadcast, ConnId, Effect, GameId, Publish, Send
from server.hub.errors import CommandError, ErrorCode
from server.hub.identity import PlayerId, PlayerInfo
from server.hub.lobby import MAX_SEEKS_PER_PLAYER, ChallengeBook, SeekBook
from server.hub.messages import JsonObject, Message, MessageKind
from server.hub.persist_tokens import PersistTokens
from server.hub.room import GameRoom, RoomSettings
from server.hub.timers import Timers


@dataclass(frozen=True)
class HubConfig:
    """Limits and timings of the hub (all times in milliseconds)."""

    max_seeks_per_player: int = MAX_SEEKS_PER_PLAYER
    max_challenges_per_player: int = 3
    max_connections_per_player: int = 10
    finished_room_ttl_ms: int = 15 * 60_000
    """How long a finished game stays in memory (final state, post-game chat, rematch)."""
    room: RoomSettings = field(default_factory=RoomSettings)


@dataclass
class Connection:
    conn_id: ConnId
    player_id: PlayerId
    rooms: set[GameId] = field(default_factory=set)


@dataclass
class OnlinePlayer:
    info: PlayerInfo
    conns: list[ConnId] = field(default_factory=list)


class HubState:
    """The hub's state and shared helpers (see the module docstring)."""

    def __init__(self, config: HubConfig | None = None, rng: random.Random | None = None) -> None:
        self.config = config or HubConfig()
        self._rng = rng or random.Random()
        self._conns: dict[ConnId, Connection] = {}
        self._players: dict[PlayerId, OnlinePlayer] = {}
        self._names: dict[str, PlayerId] = {}
        self._playing: dict[PlayerId, GameId] = {}
        self._seeks = SeekBook(self.config.max_seeks_per_player)
        self._challenges = ChallengeBook(self.config.max_challenges_per_player)
        self._seek_watchers: set[ConnId] = set()
        self._rooms: dict[GameId, GameRoom] = {}
        self._timers = Timers()
        self._tokens = PersistTokens()

    # ============================================================ connections

    def _drop_connection(self, conn_id: ConnId) -> None:
        conn = self._conns.pop(conn_id)
        for game_id in conn.rooms:
            room = self._rooms.get(game_id)
            if room is not None:
                room.state.leave(conn_id)
        self._seek_watchers.discard(conn_id)
        self._players[conn.player_id].conns.remove(conn_id)

    def _info(self, conn: Connection) -> PlayerInfo:
        return self._players[conn.player_id].info

    def _send_player(self, player_id: PlayerId, message: Message) -> list[Effect]:
        online = self._players.get(player_id)
        if online is None:
            return []
        return [Send(conn, message) for conn in online.conns]

    # ================================================================= lobby

    def _lobby(self, t: str, data: JsonObject) -> list[Effect]:
        message = Message(t, data)
        effects: list[Effect] = []
        if self._seek_watchers:
            effects.append(Broadcast("lobby", message, tuple(sorted(self._seek_watchers))))
        effects.append(Publish("lobby", message))
        return effects

    def _remove_seeks(self, player_id: PlayerId, out: list[Effect]) -> list[int]:
        removed = [s.id for s in self._seeks.remove_player(player_id)]
        for seek_id in removed:
            out += self._lobby(MessageKind.SEEK_REMOVED, {"id": seek_id})
        return removed

    def _cancel_challenges(self, player_id: PlayerId, reason: str, out: list[Effect]) -> None:
        for challenge in self._challenges.involving(player_id):
            self._challenges.remove(challenge.id)
            message = Message(
                MessageKind.CHALLENGE_CANCELLED, {"id": challenge.id, "reason": reason}
            )
            for party in (challenge.sender.id, challenge.target.id):
                out += self._send_player(party, message)

    def _check_free(self, player: PlayerInfo, yourself: bool = True) -> None:
        if player.id in self._playing:
            if yourself:
                raise CommandError(ErrorCode.ALREADY_PLAYING)
            raise CommandError(ErrorCode.PLAYER_BUSY, f"{player.name} is playing a game.")

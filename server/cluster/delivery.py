"""Where the effects of this node's hub go.

Messages for remote connections go to their home nodes (:mod:`~server.cluster.remote`);
lobby publications keep the seek registry in step (:mod:`~server.cluster.seeks`); other
publications go on the bus; the messages of a game this node lost to another owner (fenced)
go nowhere; answers to the node's own internal commands are dropped. What is left runs as
on a single node.
"""

from __future__ import annotations

from server.cluster.host import GAMES_CHANNEL, INTERNAL_ACK, LOBBY_CHANNEL
from server.cluster.remote import RemoteConnections
from server.cluster.seeks import ClusterSeeks
from server.cluster.shared import Part, Shared
from server.hub.effects import Broadcast, Close, ConnId, Effect, GameId, Publish, Send
from server.hub.messages import Message, MessageKind
from server.transport.codec import encode_message

__all__ = ["Delivery"]


class Delivery(Part):
    """See the module docstring."""

    def __init__(self, shared: Shared, remotes: RemoteConnections, seeks: ClusterSeeks) -> None:
        super().__init__(shared)
        self._remotes = remotes
        self._seeks = seeks
        self.hello_game: dict[ConnId, GameId] = {}
        """The game a connection plays on another node, told in its ``hello``."""

    def sort(self, effects: list[Effect]) -> list[Effect]:
        """Deliver the effects that leave this node; return those that run here."""
        here: list[Effect] = []
        remotes = self._remotes
        for effect in effects:
            if isinstance(effect, Send):
                if effect.message.t == MessageKind.CHALLENGE:
                    challenge_id = effect.message.d.get("id")
                    if isinstance(challenge_id, int):
                        self._seeks.track_challenge(challenge_id)
                if effect.conn_id in remotes:
                    remotes.send(effect.conn_id, effect.message)
                    continue
                if effect.message.a == INTERNAL_ACK or self._fenced(effect.message):
                    continue
                if effect.message.t == MessageKind.HELLO and effect.conn_id in self.hello_game:
                    data = {**effect.message.d, "game": self.hello_game[effect.conn_id]}
                    effect = Send(effect.conn_id, Message(MessageKind.HELLO, data))
                self._watch_local(effect.message)
            elif isinstance(effect, Broadcast):
                if self._fenced(effect.message):
                    continue
                local = remotes.broadcast(effect)
                for _ in local:
                    self._watch_local(effect.message)
                if not local:
                    continue
                if len(local) != len(effect.conn_ids):
                    effect = Broadcast(effect.topic, effect.message, tuple(local))
            elif isinstance(effect, Close) and effect.conn_id in remotes:
                remotes.closed(effect.conn_id, effect.reason)
                continue
            elif isinstance(effect, Publish):
                if not self._fenced(effect.message):
                    self._on_publish(effect)
                continue
            here.append(effect)
        return here

    def _fenced(self, message: Message) -> bool:
        """A message of a game this node lost to another owner: never shown to anyone."""
        game_id = message.d.get("game") if isinstance(message.d, dict) else None
        return isinstance(game_id, str) and game_id in self._ownership.lost

    def _watch_local(self, message: Message) -> None:
        if message.t == MessageKind.GAME and message.d.get("role") == "spectator":
            self._host.mark_presence()  # a local connection watches a game of this hub

    def _on_publish(self, effect: Publish) -> None:
        message = effect.message
        frame = encode_message(message)
        if effect.channel == LOBBY_CHANNEL:
            self._seeks.changed(message, frame)
            return
        if effect.channel == GAMES_CHANNEL:
            self._host.mark_presence()
        self._sender.publish(effect.channel, frame)

"""The versioned event log of a game room.

Every room event gets the next version ``v`` (1, 2, 3 …; monotonic per room; a room resumed from
another hub may start higher, see ``first_version``). Some events are for
one audience only (players' chat for the players, spectators' chat for the others), so one viewer may
see gaps in ``v``; gaps never mean loss. The log keeps the last ``capacity`` events so that a client
that reconnects with the last version it saw can be sent what it missed; when the log no longer
reaches back that far, the client gets one full snapshot instead.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum

from server.hub.messages import JsonObject, Message


class Audience(Enum):
    EVERYONE = "everyone"
    PLAYERS = "players"
    SPECTATORS = "spectators"

    def includes(self, is_player: bool) -> bool:
        if self is Audience.EVERYONE:
            return True
        return is_player == (self is Audience.PLAYERS)


@dataclass(frozen=True)
class RoomEvent:
    message: Message
    audience: Audience

    @property
    def version(self) -> int:
        assert self.message.v is not None
        return self.message.v


class EventLog:
    """Bounded log of room events with versions."""

    def __init__(self, capacity: int = 200, first_version: int = 1) -> None:
        """:param first_version: the version of the first event; later ones count up from it.

        :raises ValueError: ``capacity`` or ``first_version`` is below 1.
        """
        if capacity < 1:
            raise ValueError("capacity must be positive")
        if first_version < 1:
            raise ValueError("first_version must be positive")
        self._events: deque[RoomEvent] = deque(maxlen=capacity)
        self._version = first_version - 1

    @property
    def version(self) -> int:
        """The version of the latest event (``first_version - 1`` before the first)."""
        return self._version

    def append(self, t: str, d: JsonObject, audience: Audience = Audience.EVERYONE) -> RoomEvent:
        self._version += 1
        event = RoomEvent(Message(t, d, v=self._version), audience)
        self._events.append(event)
        return event

    def since(self, version: int) -> list[RoomEvent] | None:
        """Events after ``version``, or ``None`` if the log cannot supply all of them (too old, or
        a version from the future)."""
        if version > self._version or version < 0:
            return None
        if version == self._version:
            return []
        oldest = self._events[0].version if self._events else self._version + 1
        if version + 1 < oldest:
            return None
        return [e for e in self._events if e.version > version]

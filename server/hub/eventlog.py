"""The versioned event log of a game room.

Every room event gets the next version ``v`` (1, 2, 3 …; monotonic per room; a room resumed from
another hub may start higher, see ``first_version``). Some events are for
one audience only (players' chat for the players, spectators' chat for the others), so one viewer may
see gaps in ``v``; gaps never mean loss. The log keeps the last ``capacity`` events so that a client
that reconnects with the last version it saw can be sent what it missed; when the log no longer
reaches back that far, the client gets one full snapshot instead.

The log lives as long as its game, so it keeps each event in a form the cyclic garbage collector
does not track: one flat tuple of atoms (version, audience, type, and the payload flattened, see
:func:`freeze`), which CPython stops tracking at the first collection that sees it. A :class:`RoomEvent` is built again when an event is replayed (docs/benchmarks.md, "Garbage
collection").
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Any

from server.hub.messages import Message, Payload


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


_DICT = object()
_LIST = object()
_END = object()
"""Markers of the flat form (see :func:`freeze`); a bare ``object()`` is not a container, so
tuples holding one can still be untracked."""

_Stored = tuple[Any, ...]
"""An event as the log keeps it: (version, audience value, type, *frozen payload)."""


def freeze(value: Any, prefix: tuple[Any, ...] = ()) -> tuple[Any, ...]:
    """``prefix`` followed by a JSON-ready ``value`` as one flat tuple of atoms: a dict is
    ``_DICT, key, value, ..., _END``, a list (or tuple) ``_LIST, item, ..., _END``, and
    strings, numbers, booleans and None stand for themselves.

    One flat tuple, because CPython untracks a tuple only once none of its items is tracked:
    nested tuples would lose one level per collection that sees them, and in the old
    generation that means per full collection."""
    flat = list(prefix)
    _flatten(value, flat)
    return tuple(flat)


_ATOMS = frozenset({str, int, bool, float, type(None)})


def _flatten(value: Any, flat: list[Any]) -> None:
    kind = type(value)
    if kind is dict:
        flat.append(_DICT)
        for key, item in value.items():
            flat.append(key)
            if type(item) in _ATOMS:
                flat.append(item)
            else:
                _flatten(item, flat)
        flat.append(_END)
    elif kind is list or kind is tuple:
        flat.append(_LIST)
        if all(type(item) is str for item in value):  # a move list
            flat += value
        else:
            for item in value:
                _flatten(item, flat)
        flat.append(_END)
    else:
        flat.append(value)


def thaw(frozen: tuple[Any, ...], start: int = 0) -> Any:
    """The value :func:`freeze` flattened from ``frozen[start]`` on (tuples come back as
    lists)."""
    value, _ = _unflatten(frozen, start)
    return value


def _unflatten(flat: tuple[Any, ...], i: int) -> tuple[Any, int]:
    token = flat[i]
    if token is _DICT:
        obj: dict[Any, Any] = {}
        i += 1
        while flat[i] is not _END:
            obj[flat[i]], i = _unflatten(flat, i + 1)
        return obj, i + 1
    if token is _LIST:
        items: list[Any] = []
        i += 1
        while flat[i] is not _END:
            item, i = _unflatten(flat, i)
            items.append(item)
        return items, i + 1
    return token, i + 1


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
        self._events: deque[_Stored] = deque(maxlen=capacity)
        self._version = first_version - 1

    @property
    def version(self) -> int:
        """The version of the latest event (``first_version - 1`` before the first)."""
        return self._version

    def append(self, t: str, d: Payload, audience: Audience = Audience.EVERYONE) -> RoomEvent:
        event, stored = self.prepare(t, d, audience)
        self.append_prepared(stored)
        return event

    def prepare(
        self, t: str, d: Payload, audience: Audience = Audience.EVERYONE
    ) -> tuple[RoomEvent, _Stored]:
        """The event :meth:`append` would add now, and its stored form, without adding it: a
        room builds the event of a move while the move is being written, and appends it with
        :meth:`append_prepared` once stored (if no other event came first)."""
        version = self._version + 1
        return RoomEvent(Message(t, d, v=version), audience), freeze(
            d, (version, audience.value, t)
        )

    def append_prepared(self, stored: _Stored) -> None:
        """Add an event built by :meth:`prepare`.

        :raises ValueError: another event was added since it was prepared (its version is
            taken).
        """
        if stored[0] != self._version + 1:
            raise ValueError(f"event version {stored[0]} follows {self._version}")
        self._version += 1
        self._events.append(stored)

    def since(self, version: int) -> list[RoomEvent] | None:
        """Events after ``version``, or ``None`` if the log cannot supply all of them (too old, or
        a version from the future)."""
        if version > self._version or version < 0:
            return None
        if version == self._version:
            return []
        oldest = self._events[0][0] if self._events else self._version + 1
        if version + 1 < oldest:
            return None
        return [
            RoomEvent(Message(e[2], thaw(e, 3), v=e[0]), Audience(e[1]))
            for e in self._events
            if e[0] > version
        ]

"""What the hub driver needs of the outside world, as protocols and types.

:class:`~server.transport.driver.HubDriver` runs the hub's effects through these: the
:class:`Recorder` writes the hub's persistence records (the composition root adapts the store;
a cluster node fences it by lease), a :class:`ColdLoader` loads a cold correspondence game a
command names, each connection is a :class:`Peer` (its outbox, its close), the
:data:`Publisher` hands room events to the bus. :data:`StoredGames` is what
:meth:`~server.transport.driver.HubDriver.connect` is told of a player's stored games.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from server.hub.commands import Command
from server.hub.effects import ConnId, MoveAppended, PersistRecord
from server.hub.identity import PlayerId, Rating, RatingKey
from server.transport.outbox import FrameSink

__all__ = [
    "ASK",
    "AskStore",
    "ColdLoader",
    "MoveStored",
    "Peer",
    "PersistError",
    "Publisher",
    "RatingChange",
    "Recorder",
    "StoredGames",
]

RatingChange = tuple[PlayerId, RatingKey, Rating]
"""A player's new rating in a pool, reported by the recorder after a rated game."""


class PersistError(Exception):
    """A record was not written. ``reason`` is shown to the players (keep it short);
    ``offers_gone``: the stored offers a new game answers whose rows this node no longer holds
    (``Hub.persist_failed(offers_gone=…)``)."""

    def __init__(self, reason: str, *, offers_gone: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offers_gone = offers_gone


class Recorder(Protocol):
    """Writes the hub's persistence records (the composition root adapts the store)."""

    async def write(self, record: PersistRecord) -> Sequence[RatingChange]:
        """Write ``record``; return the rating changes it caused (a rated game's end).

        Returns only after the write has committed.

        :raises PersistError: nothing was written.
        """
        ...

    def submit_move(self, record: MoveAppended, written: MoveStored) -> None:
        """Start writing a move without a task: queue it for the next group commit. Then
        ``written(None)`` is called once it has committed, or ``written(PersistError)`` if it
        was not stored (the same contract as :meth:`write`) — never from within this call."""
        ...

    async def keep_versions(self, versions: Mapping[str, int]) -> None:
        """Keep the last room event version of the running games (at a graceful stop); a
        failure is logged, never raised (the next process then makes the versions jump)."""
        ...


class ColdLoader(Protocol):
    """Loads the room of a game not in memory (a cold correspondence game) for a command that
    names it (``server.app.cold_games``); the driver hands it such commands first."""

    def intercept(self, conn_id: ConnId, command: Command, lag_ms: int) -> bool:
        """Take ``command`` (naming a game with no room here) if its game may be a cold one:
        then it is handed back with :meth:`~server.transport.driver.HubDriver.handle_now` once
        the game is loaded (or found not to be loadable: the hub then answers as for any
        unknown game). False: the hub answers it at once."""
        ...


class Peer(Protocol):
    """What the driver needs of a connection."""

    @property
    def outbox(self) -> FrameSink: ...

    def close_soon(self, code: int, reason: str) -> None:
        """Close the connection without waiting (the hub has already forgotten it)."""
        ...


Publisher = Callable[[str, bytes], None]
"""Hands an encoded message to the bus on a channel (must not block)."""

MoveStored = Callable[["PersistError | None"], None]
"""Told by :meth:`Recorder.submit_move` whether a move was stored."""


class _Ask:
    """:meth:`~server.transport.driver.HubDriver.connect`'s default: the driver reads the stored
    games itself."""


ASK = _Ask()
AskStore = _Ask
"""The type of :data:`ASK`."""

StoredGames = Sequence[str] | _Ask | None
"""What :meth:`~server.transport.driver.HubDriver.connect` is given of a player's stored
correspondence games: their ids, :data:`ASK` (the driver reads them), or ``None`` (none to
add)."""

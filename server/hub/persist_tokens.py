"""Persist tokens: the number that names one write the hub asked for, until it is reported.

Whoever asks for a write (the hub creating a game, a room writing a move, a takeback or an
ending) takes its token here with :meth:`PersistTokens.issue`, which records at once which game
and which kind of write it names; the driver's report (:meth:`~server.hub.hub.Hub.persisted`,
:meth:`~server.hub.hub.Hub.persist_failed`) takes the entry back with :meth:`PersistTokens.take`.
"""

from __future__ import annotations

from enum import StrEnum

from server.hub.effects import GameId


class WriteKind(StrEnum):
    """What a persist token's write is, i.e. who is told when it is reported."""

    CREATE = "create"
    """``GameCreated``: the hub starts the game (or drops it)."""
    MOVE = "move"
    """``MoveAppended``: the room's pending move."""
    TAKEBACK = "takeback"
    """``MovesRetracted``: the room's pending takeback."""
    FINISH = "finish"
    """``GameFinished``: the room's pending end."""
    BERSERK = "berserk"
    """``BerserkMarked``: the room's pending berserk."""
    PREMOVES = "premoves"
    """``PremovesSet``: a player's conditional premoves (beside the room's pending write)."""


class PersistTokens:
    """The writes asked for and not yet reported, by token (tokens count up from 1)."""

    __slots__ = ("_last", "_owed")

    def __init__(self) -> None:
        self._owed: dict[int, tuple[GameId, WriteKind]] = {}
        self._last = 0

    def issue(self, game_id: GameId, kind: WriteKind) -> int:
        """A new token for a write of ``kind`` about ``game_id``, owed until reported."""
        self._last += 1
        self._owed[self._last] = (game_id, kind)
        return self._last

    def get(self, token: int) -> tuple[GameId, WriteKind] | None:
        """What ``token`` names, while it is owed; else ``None``."""
        return self._owed.get(token)

    def take(self, token: int) -> tuple[GameId, WriteKind]:
        """What ``token`` names; it is no longer owed.

        :raises ValueError: unknown or already reported token (a driver bug).
        """
        entry = self._owed.pop(token, None)
        if entry is None:
            raise ValueError(f"unknown or already reported persist token {token}")
        return entry

    def owe_again(self, token: int, entry: tuple[GameId, WriteKind]) -> None:
        """``token``'s write failed but must still be written (a server-decided end): its
        report is owed again."""
        self._owed[token] = entry

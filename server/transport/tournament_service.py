"""What the HTTP API and ICS doors need of the tournament director (``server.app.tournaments``),
as a protocol: adapters do not import ``server.app``; the composition root hands the director
over (:class:`TournamentService`).

A refusal of the director is a :class:`~server.hub.errors.CommandError` (its
``TournamentRefused``) carrying the :class:`~server.hub.errors.ErrorCode`: every door shows the
code's meaning in its own words, and nothing changed.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Protocol

from server.hub.identity import PlayerId
from server.hub.tournament.values import StandingRow, TournamentSettings
from server.transport.tournament_ws import TournamentDesk

__all__ = ["TournamentGameLine", "TournamentService", "entry_status"]


class TournamentGameLine(Protocol):
    """One game of a tournament as the director lists it (its ``TournamentGameRow``)."""

    @property
    def game_id(self) -> str: ...

    @property
    def round(self) -> int: ...

    @property
    def white(self) -> str: ...

    @property
    def black(self) -> str: ...

    @property
    def result(self) -> str | None: ...


class TournamentService(TournamentDesk, Protocol):
    """The director's public API the HTTP and ICS doors call (docs/tournaments.md): the
    websocket's :class:`~server.transport.tournament_ws.TournamentDesk` and the reads those
    doors answer besides."""

    async def settings(self, tournament_id: str) -> TournamentSettings: ...

    async def standings(self, tournament_id: str) -> builtins.list[StandingRow]: ...

    async def games(self, tournament_id: str) -> Sequence[TournamentGameLine]: ...

    async def trf(self, tournament_id: str, *, address: str = "") -> str: ...


def entry_status(rows: Sequence[StandingRow], player: PlayerId) -> str | None:
    """``player``'s entry status in the standings (``active`` / ``paused`` / ``withdrawn``), or
    None when they never entered."""
    return next((row.status for row in rows if row.player == player), None)

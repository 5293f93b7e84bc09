"""A tournament as a hub keeps it while it runs (:class:`Live`), and where its games are
created (:class:`GameSeat`): the parts of the tournament runner (``tournament_live``) that
are values rather than work."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol

from server.hub.errors import ErrorCode
from server.hub.identity import PlayerId
from server.hub.tournament.board import TournamentBoard
from server.hub.tournament.state import TournamentState
from server.hub.tournament.values import Event, StandingRow, TournamentGame, TournamentSettings

__all__ = ["GameSeat", "Live", "refused"]


def refused(code: ErrorCode) -> Exception:
    """The director's refusal (imported late: the director module imports this one)."""
    from server.app.tournaments import TournamentRefused

    return TournamentRefused(code)


class GameSeat(Protocol):
    """Where a tournament's games are created: the hub (through its driver)."""

    def start_game(
        self,
        game_id: str,
        white: PlayerId,
        black: PlayerId,
        names: tuple[str, str],
        settings: TournamentSettings,
        tournament: tuple[str, int],
    ) -> None:
        """Create the game ``game_id`` (``white`` moves first), naming its tournament and round;
        a player without a connection gets it too (the first-move window applies)."""
        ...

    def busy(self, player: PlayerId) -> bool:
        """Whether ``player`` is in a game on the hub now (not paired in an arena wave)."""
        ...


@dataclass
class Live:
    """One tournament as the runner keeps it: settings, state, events seen, its lock and timer."""

    id: str
    created_by: str | None
    settings: TournamentSettings
    state: TournamentState
    seq: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    timer: asyncio.TimerHandle | None = None
    stored_deadline: int | None = -1
    """The deadline last written to the store (-1: not written by this hub yet)."""
    board: TournamentBoard = field(init=False)
    """The standings and views, cached per event applied and kept up to date incrementally."""
    finishes: list[tuple[str, TournamentGame, int]] = field(default_factory=list)
    """Games' ends told and not yet stored (:meth:`TournamentRunner.game_finished`)."""
    finishing: bool = False
    """A task is storing :attr:`finishes` (the others only add to them)."""
    push: asyncio.TimerHandle | None = None
    """The coalesced push of the standings, when one is due."""
    wave: asyncio.TimerHandle | None = None
    """The coalesced arena wave after games' ends, when one is due."""

    def __post_init__(self) -> None:
        self.board = TournamentBoard(self.id, self.created_by, self.settings)

    def standings(self) -> list[StandingRow]:
        """The standings now (the board's, computed once per event applied)."""
        return self.board.standings(self.state)

    def apply(self, event: Event) -> None:
        """Fold one more event in (the board folds it into its answers when next asked)."""
        self.state.apply(event)

    def reset(self, state: TournamentState, seq: int) -> None:
        """Replace the state (reloaded from the store; the board starts its fold again)."""
        self.state, self.seq = state, seq

"""A tournament as a hub keeps it while it runs (:class:`Live`), and where its games are
created (:class:`GameSeat`): the parts of the tournament runner (``tournament_live``) that
are values rather than work."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol

from server.hub.errors import ErrorCode
from server.hub.identity import PlayerId
from server.hub.tournament.arena import ArenaSheet, arena_rows, score_sheets
from server.hub.tournament.standings import standings
from server.hub.tournament.state import TournamentState
from server.hub.tournament.values import (
    Event,
    Finished,
    Joined,
    StandingRow,
    TournamentSettings,
)

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
    sheets: dict[PlayerId, ArenaSheet] | None = None
    """An arena's score sheets kept up to date game by game (None: to be recomputed)."""
    rows: tuple[int, list[StandingRow]] | None = None
    """The standings computed at event count ``rows[0]``."""
    push: asyncio.TimerHandle | None = None
    """The coalesced push of the standings, when one is due."""
    wave: asyncio.TimerHandle | None = None
    """The coalesced arena wave after games' ends, when one is due."""

    def standings(self) -> list[StandingRow]:
        """The standings now, computed once per change (an arena's from its kept sheets: a
        thousand players' standings re-scored from every game took 160 ms; sorted from the
        sheets, a few ms)."""
        cached = self.rows
        if cached is not None and cached[0] == self.seq:
            return cached[1]
        if self.settings.format == "arena":
            if self.sheets is None:
                self.sheets = score_sheets(self.state.entries, self.state.finished_games())
            rows = arena_rows(self.state, self.sheets)
        else:
            rows = standings(self.settings, self.state)
        self.rows = (self.seq, rows)
        return rows

    def apply(self, event: Event) -> None:
        """Fold one more event in, keeping an arena's sheets (a rejoin, whose new rating
        re-rates the past games' performance, has them recomputed)."""
        state, sheets = self.state, self.sheets
        if sheets is not None:
            if isinstance(event, Joined) and (
                event.player in state.entries or event.player in state.last_opponent
            ):
                # A rejoin (or a player with games before any entry): recomputed.
                self.sheets = sheets = None
            elif isinstance(event, Joined):
                sheets[event.player] = ArenaSheet()
        known = isinstance(event, Finished) and event.game_id not in state.results
        state.apply(event)
        if sheets is not None and known and isinstance(event, Finished):
            paired = state.games.get(event.game_id)
            if paired is None:
                return
            entries = state.entries
            for player, opponent in ((paired.white, paired.black), (paired.black, paired.white)):
                if player in sheets:
                    rating = entries[opponent].rating if opponent in entries else 0
                    sheets[player] = sheets[player].add(event.result, player, rating)

    def reset(self, state: TournamentState, seq: int) -> None:
        """Replace the state (reloaded from the store)."""
        self.state, self.seq, self.sheets, self.rows = state, seq, None, None

"""The standings of any format, and the podium: pure functions of the state (itself the fold of
the events), so a restarted hub shows exactly what it showed before."""

from __future__ import annotations

from collections.abc import Sequence

from server.hub.tournament.arena import arena_standings
from server.hub.tournament.round_robin import round_robin_standings
from server.hub.tournament.state import TournamentState
from server.hub.tournament.swiss import swiss_standings
from server.hub.tournament.values import StandingRow, TournamentSettings

__all__ = ["podium", "standings"]


def standings(settings: TournamentSettings, state: TournamentState) -> list[StandingRow]:
    """Every entrant's row, best first (arena: points, performance; Swiss: score, Buchholz cut
    1, Sonneborn–Berger; round robin: score, Sonneborn–Berger)."""
    if settings.format == "arena":
        return arena_standings(state)
    if settings.format == "swiss":
        return swiss_standings(state)
    return round_robin_standings(state)


def podium(
    settings: TournamentSettings,
    state: TournamentState,
    rows: Sequence[StandingRow] | None = None,
) -> list[StandingRow]:
    """The rows ranked 1 to 3 of a finished tournament (ties share a place, so possibly more
    than three rows); empty before the end. ``rows``: its standings, when the caller has them."""
    if state.phase != "finished":
        return []
    if rows is None:
        rows = standings(settings, state)
    return [row for row in rows if row.rank <= 3 and row.games > 0]

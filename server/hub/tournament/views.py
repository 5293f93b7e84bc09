"""A tournament as every door shows it: the protocol's views (``server.hub.tournament_payloads``), pure
functions of the settings and the state (so a restarted hub shows exactly what it showed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from server.hub.clock import time_control_view
from server.hub.identity import PlayerId
from server.hub.tournament.pages import page_payload
from server.hub.tournament.rounds import (
    MY_PAIRINGS,
    VIEW_PAIRINGS,
    round_page,
    round_pages,
    shown_games,
)
from server.hub.tournament.standings import podium, standings
from server.hub.tournament.state import Entry, TournamentState, arena_ends_at
from server.hub.tournament.values import Bye, StandingRow, TournamentGame, TournamentSettings
from server.hub.tournament_payloads import (
    TournamentByeView,
    TournamentPairingView,
    TournamentRoundPayload,
    TournamentSettingsView,
    TournamentStandingsPayload,
    TournamentStandingView,
    TournamentStatusName,
    TournamentSummaryView,
    TournamentView,
)

__all__ = [
    "bye_view",
    "current_round",
    "entry_name",
    "games_of",
    "pairing_view",
    "round_answer",
    "round_payload",
    "settings_view",
    "standing_view",
    "standings_payload",
    "summary_view",
    "tournament_view",
]


def settings_view(settings: TournamentSettings) -> TournamentSettingsView:
    return {
        "name": settings.name,
        "format": settings.format,
        "variant": settings.variant,
        "tc": time_control_view(settings.control),
        "rated": settings.rated,
        "start_at_ms": settings.start_at_ms,
        "start_when_joined": settings.start_when_joined,
        "duration_ms": settings.duration_ms,
        "rounds": settings.rounds,
        "password": settings.password_hash is not None,
        "min_rating": settings.min_rating,
        "bots": settings.bots,
        "computer": settings.computer,
        "max_players": settings.max_players,
        "berserk": settings.berserk,
    }


def summary_view(
    tournament_id: str,
    status: TournamentStatusName,
    created_by: str | None,
    settings: TournamentSettings,
) -> TournamentSummaryView:
    return {
        "id": tournament_id,
        "status": status,
        "created_by": created_by,
        "settings": settings_view(settings),
    }


def _berserks(state: TournamentState) -> dict[PlayerId, int]:
    counts: dict[PlayerId, int] = {}
    for paired, game in state.finished_games():
        for player in (paired.white, paired.black):
            if game.berserk_of(player):
                counts[player] = counts.get(player, 0) + 1
    return counts


def entry_name(entries: Mapping[PlayerId, Entry], player: PlayerId) -> str:
    """The name ``player`` entered under (their id when not entered: never in practice)."""
    entry = entries.get(player)
    return player if entry is None else entry.name


def standing_view(row: StandingRow, berserks: int = 0) -> TournamentStandingView:
    return {
        "rank": row.rank,
        "player": row.player,
        "name": row.name,
        "rating": row.rating,
        "score": row.score,
        "games": row.games,
        "status": row.status,
        "tiebreaks": dict(row.tiebreaks),
        "fire": row.fire,
        "berserks": berserks,
        "sheet": list(row.sheet),
    }


def current_round(state: TournamentState) -> int:
    """The highest round paired so far (an arena's wave), 0 before the first."""
    return state.rounds_paired


def _rows(
    settings: TournamentSettings,
    state: TournamentState,
    rows: Sequence[StandingRow] | None,
    berserks: dict[PlayerId, int],
) -> list[TournamentStandingView]:
    if rows is None:
        rows = standings(settings, state)
    return [standing_view(row, berserks.get(row.player, 0)) for row in rows]


def standings_payload(
    tournament_id: str,
    settings: TournamentSettings,
    state: TournamentState,
    rows: Sequence[StandingRow] | None = None,
    *,
    page: int = 1,
) -> TournamentStandingsPayload:
    """``tournament_standings`` of ``page`` (:mod:`~server.hub.tournament.pages`): what the
    watchers of that page are pushed after a change of it (``rows``: the standings when the
    caller has them, else computed)."""
    views = _rows(settings, state, rows, _berserks(state))
    return page_payload(
        tournament_id, state.phase, current_round(state), views, page, state.playing
    )


def countdown(settings: TournamentSettings, state: TournamentState) -> int | None:
    """The next moment a viewer counts down to: the start time before the start, an arena's
    end while it runs; None otherwise."""
    if state.phase == "created":
        return settings.start_at_ms
    if state.phase == "started":
        return arena_ends_at(settings, state)
    return None


def pairing_view(
    game_id: str,
    round_: int,
    white: PlayerId,
    black: PlayerId,
    game: TournamentGame | None,
    entries: Mapping[PlayerId, Entry],
) -> TournamentPairingView:
    return {
        "game": game_id,
        "round": round_,
        "white": white,
        "black": black,
        "white_name": entry_name(entries, white),
        "black_name": entry_name(entries, black),
        "result": None if game is None else game.result,
        "white_berserk": bool(game and game.white_berserk),
        "black_berserk": bool(game and game.black_berserk),
    }


def _pairings(state: TournamentState) -> dict[str, TournamentPairingView]:
    """Every game's pairing view, in pairing order."""
    return {
        game_id: pairing_view(
            game_id, paired.round, paired.white, paired.black,
            state.results.get(game_id), state.entries,
        )
        for game_id, paired in state.games.items()
    }


def bye_view(bye: Bye, entries: Mapping[PlayerId, Entry]) -> TournamentByeView:
    return {
        "player": bye.player,
        "name": entry_name(entries, bye.player),
        "round": bye.round,
        "points": bye.points,
    }


def tournament_view(
    tournament_id: str,
    created_by: str | None,
    settings: TournamentSettings,
    state: TournamentState,
    rows: Sequence[StandingRow] | None = None,
) -> TournamentView:
    """``tournament``: the view of a tournament, its pairings bounded
    (:mod:`~server.hub.tournament.rounds`; ``rows`` as for :func:`standings_payload`)."""
    berserks = _berserks(state)
    if rows is None:
        rows = standings(settings, state)
    pairings = _pairings(state)
    round_ = current_round(state)
    shown, total = shown_games(
        settings.format == "arena",
        (row.player for row in rows),
        state.playing,
        [g for g, paired in state.games.items() if paired.round == round_],
    )
    playing = set(state.playing.values())
    return {
        **summary_view(tournament_id, state.phase, created_by, settings),
        "countdown_ms": countdown(settings, state),
        "round": round_,
        "standings": _rows(settings, state, rows, berserks),
        "pairings": [pairings[game] for game in shown],
        "pairings_total": total,
        "byes": [
            bye_view(bye, state.entries) for bye in state.byes if bye.round == round_
        ][:VIEW_PAIRINGS],
        "playing": [game for game in shown if game in playing],
        "playing_count": len(playing),
        "podium": [
            standing_view(row, berserks.get(row.player, 0)) for row in podium(settings, state, rows)
        ],
    }


def games_of(state: TournamentState, player: PlayerId) -> list[TournamentPairingView]:
    """``player``'s games in the tournament, the newest last, at most :data:`MY_PAIRINGS`."""
    mine = [
        view
        for view in _pairings(state).values()
        if player in (view["white"], view["black"])
    ]
    return mine[-MY_PAIRINGS:]


def round_payload(
    tournament_id: str, state: TournamentState, round_: int, page: int
) -> TournamentRoundPayload:
    """``tournament_round``: ``page`` of ``round_``'s pairings (:mod:`~server.hub.tournament.
    rounds`; the caller has checked that the round is paired and the page exists)."""
    games = [view for view in _pairings(state).values() if view["round"] == round_]
    byes = [bye_view(bye, state.entries) for bye in state.byes if bye.round == round_]
    return round_answer(
        tournament_id, round_, current_round(state), page, games, byes, state.playing
    )


def round_answer(
    tournament_id: str,
    round_: int,
    rounds: int,
    page: int,
    games: Sequence[TournamentPairingView],
    byes: Sequence[TournamentByeView],
    playing: Mapping[PlayerId, str],
) -> TournamentRoundPayload:
    """``tournament_round`` of the round's ``games`` and ``byes`` (both by page)."""
    shown = round_page(games, page)
    now = {shown_game["game"] for shown_game in shown} & set(playing.values())
    return {
        "id": tournament_id,
        "round": round_,
        "rounds": rounds,
        "page": page,
        "pages": max(round_pages(len(games)), round_pages(len(byes))),
        "total": len(games),
        "pairings": shown,
        "byes": round_page(byes, page),
        "playing": [view["game"] for view in shown if view["game"] in now],
    }

"""The live tournament's board (incremental, cached) answers what the pure functions answer,
event by event: standings, the pushed standings, the whole view, an arena's waiting players."""

from __future__ import annotations

import random

import pytest
from tournament_support import settings

from server.hub.tournament.arena import pair_wave, waiting_players
from server.hub.tournament.board import TournamentBoard
from server.hub.tournament.standings import standings
from server.hub.tournament.state import TournamentState, replay
from server.hub.tournament.values import (
    Bye,
    Ended,
    Event,
    Finished,
    Joined,
    Paired,
    Paused,
    Resumed,
    Started,
    TournamentGame,
    TournamentSettings,
    Withdrew,
)
from server.hub.tournament.views import (
    games_of,
    round_payload,
    standings_payload,
    tournament_view,
)


def _check(board: TournamentBoard, tournament: TournamentSettings, state: TournamentState) -> None:
    assert board.standings(state) == standings(tournament, state)
    assert board.standings_payload(state) == standings_payload("t1", tournament, state)
    # Page 2 holds the rows after the tenth, and the games being played by those players.
    second = board.standings_payload(state, 2)
    assert second == standings_payload("t1", tournament, state, page=2)
    rows = board.view(state)["standings"]
    pages = max(1, (len(rows) + 9) // 10)
    assert second["standings"] == rows[10:20] and (second["pages"], second["players"]) == (
        pages, len(rows)
    )
    playing = {state.playing[r["player"]] for r in rows[10:20] if r["player"] in state.playing}
    assert second["playing"] == sorted(playing)
    for at, row in enumerate(rows):
        assert board.index(state)[row["player"]] == at and board.row_of(state, row["player"]) == row
    assert board.view(state) == tournament_view("t1", "ann", tournament, state)
    for player in list(state.entries)[:3]:
        assert board.games_of(state, player) == games_of(state, player)
    for round_ in range(1, state.rounds_paired + 1):
        assert board.round_payload(state, round_, 1) == round_payload("t1", state, round_, 1)
    if tournament.format == "arena":
        assert board.waiting(state) == waiting_players(state, standings(tournament, state))
    # A second read of the same state is the cached answer.
    assert board.view(state) is board.view(state)


def _events(rng: random.Random, fmt: str) -> list[Event]:
    """A random tournament's events: joins, pauses, rejoins at another rating, waves or rounds
    of random results with berserks, byes, the end."""
    events: list[Event] = [Joined(f"p{i}", f"P{i}", rng.randint(1200, 2000), i) for i in range(12)]
    events.append(Started(100))
    playing: set[str] = set()
    games: dict[str, tuple[str, str]] = {}
    status = {f"p{i}": "active" for i in range(12)}
    number = 0
    for wave in range(1, 9):
        for player in rng.sample(sorted(status), 2):
            if status[player] == "active" and player not in playing:
                if fmt == "arena" and rng.random() < 0.5:
                    events.append(Paused(player, wave))
                    status[player] = "paused"
                else:
                    events.append(Withdrew(player, wave))
                    status[player] = "withdrawn"
            elif status[player] == "paused":
                events.append(Resumed(player, wave))
                status[player] = "active"
            elif status[player] == "withdrawn":  # a rejoin, rated differently since
                events.append(Joined(player, player.upper(), rng.randint(1200, 2000), wave))
                status[player] = "active"
        free = sorted(p for p, s in status.items() if s == "active" and p not in playing)
        rng.shuffle(free)
        if len(free) % 2:
            events.append(Bye(free.pop(), wave, 1.0, wave))
        for white, black in zip(free[::2], free[1::2], strict=True):
            number += 1
            game_id = f"g{number}"
            events.append(Paired(game_id, wave, white, black, wave))
            games[game_id] = (white, black)
            playing |= {white, black}
        for game_id in list(games):
            if rng.random() < 0.7:
                white, black = games.pop(game_id)
                playing -= {white, black}
                result = rng.choice(["1-0", "0-1", "1/2-1/2"])
                game = TournamentGame(
                    white, black, result, rng.randint(2, 60),  # type: ignore[arg-type]
                    rng.random() < 0.3, rng.random() < 0.3,
                )
                events.append(Finished(game_id, game, wave))
    events.append(Ended(1000))
    return events


@pytest.mark.parametrize("fmt", ["arena", "swiss", "round_robin"])
@pytest.mark.parametrize("seed", range(4))
def test_board_equals_the_pure_answers_event_by_event(fmt: str, seed: int) -> None:
    tournament = settings(fmt)
    board = TournamentBoard("t1", "ann", tournament)
    state = TournamentState()
    _check(board, tournament, state)
    for event in _events(random.Random(seed), fmt):
        state.apply(event)
        if random.Random(seed * 1000 + state.version).random() < 0.6:  # reads skip some events
            _check(board, tournament, state)
    _check(board, tournament, state)


def test_board_starts_again_when_the_state_is_replaced() -> None:
    tournament = settings("arena")
    events = _events(random.Random(7), "arena")
    board = TournamentBoard("t1", "ann", tournament)
    state = replay(events[: len(events) // 2])
    _check(board, tournament, state)
    reloaded = replay(events)  # as a conflict's reload does
    _check(board, tournament, reloaded)


def test_board_folds_a_large_wave_incrementally() -> None:
    """A 200-player arena: waves of real pairings, each read after the wave's results."""
    tournament = settings("arena")
    board = TournamentBoard("t1", "ann", tournament)
    state = TournamentState()
    rng = random.Random(3)
    for i in range(200):
        state.apply(Joined(f"p{i:03}", f"P{i}", rng.randint(1000, 2200), i))
    state.apply(Started(1))
    number = 0
    for wave in range(1, 4):
        paired = []
        for pairing in pair_wave(board.waiting(state), others_playing=False):
            number += 1
            state.apply(Paired(f"g{number}", wave, pairing.white, pairing.black, wave))
            paired.append((f"g{number}", pairing))
        assert len(paired) == 100
        for game_id, pairing in paired:
            result = rng.choice(["1-0", "0-1", "1/2-1/2"])
            game = TournamentGame(pairing.white, pairing.black, result, 30)  # type: ignore[arg-type]
            state.apply(Finished(game_id, game, wave))
        _check(board, tournament, state)

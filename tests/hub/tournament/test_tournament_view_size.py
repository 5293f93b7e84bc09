"""The ``tournament`` view's size is bounded whatever the number of waves (and players): a
1,000-player arena's answer, as the websocket encodes it, stays small after 1, 5 and 15 waves
(it was ~1.3 MB after 15: every pairing of every wave), the shared part does not grow with the
waves, a player's own games are capped, and every wave's pairings are read by page equal to
the whole history (docs/tournaments.md, "Scale")."""

from __future__ import annotations

import random

from tournament_support import settings

from server.hub.tournament.board import TournamentBoard
from server.hub.tournament.rounds import MY_PAIRINGS, ROUND_PAGE_SIZE, VIEW_PAIRINGS
from server.hub.tournament.state import TournamentState
from server.hub.tournament.values import Finished, Joined, Paired, Started, TournamentGame
from server.hub.tournament.views import pairing_view
from server.transport.codec import encode
from server.transport.tournament_ws import view_frame

PLAYERS = 1000
BOUND = 30_000
"""Bytes: the view's answer with a page of the standings, the player's row and games."""


def _wave(state: TournamentState, rng: random.Random, wave: int, number: int, finish: bool) -> int:
    """Pair every player at random (a synthetic wave), finish the games unless ``finish`` is
    false; returns the last game number."""
    players = sorted(state.entries)
    rng.shuffle(players)
    paired = []
    for white, black in zip(players[::2], players[1::2], strict=True):
        number += 1
        state.apply(Paired(f"g{number}", wave, white, black, wave))
        paired.append((f"g{number}", white, black))
    if finish:
        for game_id, white, black in paired:
            result = rng.choice(["1-0", "0-1", "1/2-1/2"])
            state.apply(Finished(game_id, TournamentGame(white, black, result, 30), wave))  # type: ignore[arg-type]
    return number


def _answer(board: TournamentBoard, state: TournamentState, player: str) -> tuple[bytes, int]:
    """The websocket's answer to ``tournament`` for ``player``, and the size of its shared part
    (the view but its standings, encoded once for every connection)."""
    view = board.view(state)
    frame = view_frame(
        "t1", view, board.standings_payload(state, 1), board.row_of(state, player), 7,
        board.games_of(state, player),
    )
    shared = encode({k: v for k, v in view.items() if k != "standings"})
    return frame, len(shared)


def test_the_view_of_a_1000_player_arena_is_bounded_whatever_the_waves() -> None:
    tournament = settings("arena", max_players=PLAYERS)
    board = TournamentBoard("t1", "ann", tournament)
    state = TournamentState()
    rng = random.Random(5)
    for i in range(PLAYERS):
        state.apply(Joined(f"p{i:04}", f"Player{i}", rng.randint(1000, 2200), i))
    state.apply(Started(1))
    number, sizes, shared = 0, {}, {}
    for wave in range(1, 16):
        # The last wave's games are being played when the view is read.
        number = _wave(state, rng, wave, number, finish=False)
        if wave in (1, 5, 15):
            frame, shared[wave] = _answer(board, state, "p0001")
            sizes[wave] = len(frame)
            assert frame.startswith(b'{"t":"tournament","d":') and frame.endswith(b',"a":7}')
            view = board.view(state)
            assert len(view["pairings"]) == VIEW_PAIRINGS and view["pairings_total"] == 500
            assert view["playing_count"] == 500 and view["playing"] == [
                p["game"] for p in view["pairings"]
            ]
            # The leader's game first: the games of the best placed players, in rank order.
            ranks = {row["player"]: row["rank"] for row in view["standings"]}
            best = [min(ranks[p["white"]], ranks[p["black"]]) for p in view["pairings"]]
            assert best == sorted(best) and best[0] == 1
        for game_id in [g for g in state.games if g not in state.results]:
            paired = state.games[game_id]
            game = TournamentGame(paired.white, paired.black, "1-0", 30)
            state.apply(Finished(game_id, game, wave))
    assert all(size < BOUND for size in sizes.values()), sizes
    # The shared part does not grow with the waves (the pairings' names' lengths aside).
    assert abs(shared[15] - shared[5]) < 500 and abs(shared[5] - shared[1]) < 500, shared
    # Every wave read by page is exactly the history's pairings of that wave.
    history = [
        pairing_view(g, p.round, p.white, p.black, state.results.get(g), state.entries)
        for g, p in state.games.items()
    ]
    for wave in (1, 15):
        first = board.round_payload(state, wave, 1)
        assert (first["pages"], first["total"], first["rounds"]) == (10, 500, 15)
        read = [p for page in range(1, 11) for p in board.round_payload(state, wave, page)["pairings"]]
        assert read == [p for p in history if p["round"] == wave]
        assert len(first["pairings"]) == ROUND_PAGE_SIZE


def test_a_players_own_games_are_the_newest_and_capped() -> None:
    tournament = settings("arena")
    board = TournamentBoard("t1", None, tournament)
    state = TournamentState()
    state.apply(Joined("a", "A", 1500, 0))
    state.apply(Joined("b", "B", 1500, 1))
    state.apply(Started(1))
    for n in range(1, MY_PAIRINGS + 11):
        state.apply(Paired(f"g{n}", n, "a", "b", n))
        state.apply(Finished(f"g{n}", TournamentGame("a", "b", "1-0", 30), n))
    mine = board.games_of(state, "a")
    assert [p["game"] for p in mine] == [f"g{n}" for n in range(11, MY_PAIRINGS + 11)]
    assert board.games_of(state, "nobody") == []

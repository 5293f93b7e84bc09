"""Arena (as lichess's): scoring with streaks and berserk, and the pairing of a wave.

Scoring, per player, game by game in the order their games finished: a win 2, a draw 1, a loss
0; a player whose two previous games were both wins is *on fire* and scores double (a win 4, a
draw 2) until a game that is not a win; a win by a player who berserked (halved their own clock
before their first move, :func:`berserk_control`) in a game of at least
:data:`BERSERK_MIN_PLIES` plies (7 moves each, lichess's ``notSoQuickFinish``) scores one more.

Pairing (:func:`pair_wave`): the players waiting at one moment are matched by a maximum-weight
matching (networkx, Edmonds' blossom algorithm) whose weights put, in this order: as many games
as possible; no game between last opponents; players close in the standings (rank), then in
rating. Only players within :data:`PAIRING_WINDOW` places of each other in the waiting order are
candidates, in chunks of :data:`PAIRING_CHUNK` (lichess pairs by rank too), which keeps each
matching small. An odd player out waits for
the next wave. Two last opponents are paired again only when they are the only players waiting
and nobody else is in a game (no other pairing can ever come).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import networkx as nx

from server.hub.identity import PlayerId
from server.hub.tournament.state import Entry, TournamentState
from server.hub.tournament.values import Color, Paired, StandingRow, TournamentGame
from server.rules.time_control import Byoyomi, Fischer, TimeControl

__all__ = [
    "BERSERK_MIN_PLIES",
    "PAIRING_CHUNK",
    "PAIRING_WINDOW",
    "ArenaPairing",
    "ArenaSheet",
    "Waiting",
    "arena_standings",
    "berserk_control",
    "pair_wave",
    "score_sheets",
    "waiting_players",
]

WIN, DRAW = 2, 1
BERSERK_MIN_PLIES = 14
PAIRING_WINDOW = 8
"""How many places apart (in the waiting players' standings order) two players may be paired."""
PAIRING_CHUNK = 24
"""How many waiting players (consecutive in the standings) one matching considers."""


def berserk_control(control: TimeControl) -> TimeControl | None:
    """The clock of a player who berserks, or ``None`` if this control allows no berserk.

    Fischer: half the base time, no increment (lichess). Byoyomi: half the main time, the
    periods kept (a control with no main time cannot be halved: no berserk).
    """
    if not isinstance(control, Fischer | Byoyomi) or control.base_ms < 2:
        return None
    if isinstance(control, Fischer):
        return Fischer(control.base_ms // 2, 0)
    assert isinstance(control, Byoyomi)
    return Byoyomi(control.base_ms // 2, control.period_ms, control.periods)


@dataclass(frozen=True)
class ArenaSheet:
    """A player's arena score sheet: each finished game's points in order, and the running
    state that scores the next one.

    ``streak`` counts the wins in a row at the end of the sheet; ``fire`` is ``streak >= 2``
    (the next game scores double).
    """

    points: tuple[int, ...] = ()
    streak: int = 0
    wins: int = 0
    draws: int = 0
    berserk_wins: int = 0
    opponents_rating_sum: int = 0

    @property
    def total(self) -> int:
        return sum(self.points)

    @property
    def fire(self) -> bool:
        return self.streak >= 2

    def add(self, game: TournamentGame, player: PlayerId, opponent_rating: int) -> ArenaSheet:
        """The sheet after one more finished game of ``player``'s."""
        score = game.points_of(player)
        multiplier = 2 if self.fire else 1
        won = score == 1.0
        earned = (WIN if won else DRAW if score == 0.5 else 0) * multiplier
        berserk_win = won and game.berserk_of(player) and game.plies >= BERSERK_MIN_PLIES
        return ArenaSheet(
            points=(*self.points, earned + (1 if berserk_win else 0)),
            streak=self.streak + 1 if won else 0,
            wins=self.wins + won,
            draws=self.draws + (score == 0.5),
            berserk_wins=self.berserk_wins + berserk_win,
            opponents_rating_sum=self.opponents_rating_sum + opponent_rating,
        )

    def performance(self) -> float:
        """The performance rating over the sheet's games (average opponent rating plus 400 ×
        (wins − losses) / games); the tie-break after the score. 0 before any game."""
        games = len(self.points)
        if games == 0:
            return 0.0
        losses = games - self.wins - self.draws
        return (self.opponents_rating_sum + 400 * (self.wins - losses)) / games


def score_sheets(
    entries: dict[PlayerId, Entry], finished: Iterable[tuple[Paired, TournamentGame]]
) -> dict[PlayerId, ArenaSheet]:
    """Every entrant's sheet, recomputed from the finished games in finishing order."""
    sheets = {player: ArenaSheet() for player in entries}
    for paired, game in finished:
        for player, opponent in ((paired.white, paired.black), (paired.black, paired.white)):
            if player in sheets:
                rating = entries[opponent].rating if opponent in entries else 0
                sheets[player] = sheets[player].add(game, player, rating)
    return sheets


def arena_standings(state: TournamentState) -> list[StandingRow]:
    """The arena's standings: points, then performance, then rating; equal points and
    performance share a rank. Withdrawn players stay with their points."""
    sheets = score_sheets(state.entries, state.finished_games())
    order = sorted(
        state.entries.values(),
        key=lambda e: (-sheets[e.player].total, -sheets[e.player].performance(), -e.rating, e.seq),
    )
    rows: list[StandingRow] = []
    for index, entry in enumerate(order):
        sheet = sheets[entry.player]
        key = (sheet.total, sheet.performance())
        rank = index + 1
        if rows and (rows[-1].score, rows[-1].tiebreaks[0][1]) == key:
            rank = rows[-1].rank
        rows.append(
            StandingRow(
                rank, entry.player, entry.name, entry.rating, sheet.total, len(sheet.points),
                entry.status, (("performance", sheet.performance()),), sheet.fire, sheet.points,
            )
        )
    return rows


@dataclass(frozen=True)
class Waiting:
    """A player waiting for a game: standings rank, rating, last opponent, and colour history
    (``color_balance`` = whites − blacks so far; ``last_color`` of their last game)."""

    player: PlayerId
    rank: int
    rating: int
    last_opponent: PlayerId | None = None
    color_balance: int = 0
    last_color: Color | None = None


@dataclass(frozen=True)
class ArenaPairing:
    white: PlayerId
    black: PlayerId


def waiting_players(state: TournamentState, standings: Sequence[StandingRow]) -> list[Waiting]:
    """The active players not in a game, with what :func:`pair_wave` needs, in standings order."""
    balance: dict[PlayerId, int] = {}
    last_color: dict[PlayerId, Color] = {}
    for paired, _ in state.finished_games():
        balance[paired.white] = balance.get(paired.white, 0) + 1
        balance[paired.black] = balance.get(paired.black, 0) - 1
        last_color[paired.white], last_color[paired.black] = "white", "black"
    return [
        Waiting(
            row.player, row.rank, row.rating, state.last_opponent.get(row.player),
            balance.get(row.player, 0), last_color.get(row.player),
        )
        for row in standings
        if row.status == "active" and row.player not in state.playing
    ]


def _cost(a: Waiting, b: Waiting) -> int:
    return abs(a.rank - b.rank) * 100 + min(abs(a.rating - b.rating), 1000) // 10


def _rematch(a: Waiting, b: Waiting) -> bool:
    return a.last_opponent == b.player or b.last_opponent == a.player


def _colors(a: Waiting, b: Waiting) -> ArenaPairing:
    """White to the player with fewer whites than blacks, then to the one who had black last,
    then to the better-ranked."""
    def key(w: Waiting) -> tuple[int, int, int, PlayerId]:
        return (w.color_balance, 0 if w.last_color == "black" else 1, w.rank, w.player)

    first, second = sorted((a, b), key=key)
    return ArenaPairing(first.player, second.player)


def _match(players: Sequence[Waiting], window: int) -> list[tuple[int, int]]:
    """A maximum-cardinality, then minimum-cost matching of ``players`` (sorted by rank) with
    no rematch, as index pairs."""
    graph = nx.Graph()
    graph.add_nodes_from(range(len(players)))
    max_cost = window * 100 + 100
    # Positive integer weights (networkx is exact on integers); maxcardinality puts the number
    # of games first, the weights then prefer the closest players.
    graph.add_weighted_edges_from(
        (i, j, max_cost + 1 - _cost(a, players[j]))
        for i, a in enumerate(players)
        for j in range(i + 1, min(i + 1 + window, len(players)))
        if not _rematch(a, players[j])
    )
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    return sorted((min(i, j), max(i, j)) for i, j in matching)


def pair_wave(
    waiting: Sequence[Waiting],
    *,
    others_playing: bool,
    window: int = PAIRING_WINDOW,
    chunk: int = PAIRING_CHUNK,
) -> list[ArenaPairing]:
    """The games to start now among ``waiting`` (see the module docstring for the rules).

    ``others_playing``: some other entrant is in a game (and so may soon wait too). The waiting
    players, in standings order, are matched in consecutive chunks of about ``chunk`` players
    (the blossom algorithm is cubic: one chunk takes a few milliseconds); a chunk's odd player
    out moves on to the next chunk, and a last chunk smaller than half a chunk is merged into
    the one before, so every chunk but a lone pair has at least three players and can avoid a
    rematch. Pure and deterministic; a wave of 1,000 players takes a few hundred
    milliseconds of CPU: the adapter runs large waves off the event loop (docs/tournaments.md).
    """
    players = sorted(waiting, key=lambda w: (w.rank, -w.rating, w.player))
    if len(players) == 2 and _rematch(*players):
        return [] if others_playing else [_colors(*players)]
    pairings: list[ArenaPairing] = []
    carry: list[Waiting] = []
    start = 0
    while start < len(players):
        end = start + chunk
        if len(players) - end < chunk // 2:
            end = len(players)
        group = carry + players[start:end]
        start = end
        matched = _match(group, window)
        used = {i for pair in matched for i in pair}
        pairings.extend(_colors(group[i], group[j]) for i, j in matched)
        carry = [w for i, w in enumerate(group) if i not in used]
    return pairings

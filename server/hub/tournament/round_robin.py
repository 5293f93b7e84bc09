"""Round robin, single and double, by the FIDE Berger tables (FIDE Handbook C.05, Annex 1).

The players are numbered 1..n in the order the adapter gives (FIDE draws the numbers by lot:
the adapter shuffles with a stored seed); an odd number of players adds a number n+1 that is a
bye (its opponent sits out the round). In round r of a table for n (even) players, players i
and j (both < n) meet when i + j − 1 ≡ r (mod n − 1), the higher number having white when
i + j is even; player n meets the player i with 2i − 1 ≡ r (mod n − 1), with black in odd
rounds. A double round robin plays the table twice, colours reversed in the second cycle, and
(FIDE's recommendation in C.05 Annex 1 for double-round tournaments) the first cycle plays the
table's last two rounds in reverse order: otherwise the players with the same colour in the
table's last round and first round (numbers 1 and n/2 + 1 among them) would have three games
in a row with one colour across the cycles' boundary.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.hub.identity import PlayerId
from server.hub.tournament.state import TournamentState
from server.hub.tournament.swiss import SwissRound, pairing_numbers, ranked_rows
from server.hub.tournament.values import StandingRow

__all__ = ["berger_round", "round_count", "round_robin_round", "round_robin_standings"]


def _table_size(players: int) -> int:
    return players + players % 2


def round_count(players: int, double: bool) -> int:
    """The number of rounds of a round robin of ``players`` (twice as many when double)."""
    return (_table_size(players) - 1) * (2 if double else 1)


def berger_round(n: int, r: int) -> list[tuple[int, int]]:
    """Round ``r`` (1-based, 1..n−1) of the Berger table for ``n`` (even, ≥ 2) numbers, as
    ``(white, black)`` pairs in board order (board 1 is the one with number n)."""
    if n < 2 or n % 2 or not 1 <= r <= n - 1:
        raise ValueError(f"no round {r} in a Berger table for {n}")
    m = n - 1
    last = next(i for i in range(1, n) if (2 * i - 1 - r) % m == 0)
    boards = [(n, last) if r % 2 == 0 else (last, n)]
    # The other boards, in the table's order: from the opponent of n around the circle.
    for step in range(1, n // 2):
        i = (last - 1 + step) % m + 1
        j = (r - i) % m + 1
        low, high = min(i, j), max(i, j)
        boards.append((high, low) if (i + j) % 2 == 0 else (low, high))
    return boards


def round_robin_round(
    order: Sequence[PlayerId], r: int, *, double: bool
) -> SwissRound:
    """Round ``r`` (1-based) of the round robin of ``order`` (player k is Berger number k+1):
    its games, and the player who sits out (the bye number's opponent), if any. Double: the
    first cycle is the table with its last two rounds swapped, the second the table in its
    order with colours reversed (FIDE C.05 Annex 1)."""
    n = _table_size(len(order))
    cycle_length = n - 1
    if not 1 <= r <= round_count(len(order), double):
        raise ValueError(f"no round {r} in this round robin")
    reverse = r > cycle_length
    table_round = (r - 1) % cycle_length + 1
    if double and not reverse and cycle_length >= 2 and table_round >= cycle_length - 1:
        # FIDE's advice for double cycles: the first cycle's last two rounds swapped.
        table_round = 2 * cycle_length - 1 - table_round
    games: list[tuple[PlayerId, PlayerId]] = []
    bye: PlayerId | None = None
    for white, black in berger_round(n, table_round):
        if reverse:
            white, black = black, white
        if max(white, black) > len(order):
            bye = order[min(white, black) - 1]
            continue
        games.append((order[white - 1], order[black - 1]))
    return SwissRound(r, tuple(games), bye)


def round_robin_standings(state: TournamentState) -> list[StandingRow]:
    """Score (a bye scores nothing), then Sonneborn–Berger; ties share a rank."""
    scores = dict.fromkeys(state.entries, 0.0)
    games = dict.fromkeys(state.entries, 0)
    for paired, result in state.finished_games():
        for player in (paired.white, paired.black):
            if player in scores:
                scores[player] += result.points_of(player)
                games[player] += 1
    sb = dict.fromkeys(state.entries, 0.0)
    for paired, result in state.finished_games():
        for player, opponent in ((paired.white, paired.black), (paired.black, paired.white)):
            if player in sb:
                sb[player] += scores.get(opponent, 0.0) * result.points_of(player)
    return ranked_rows(
        state, scores, {p: (("sonneborn_berger", v),) for p, v in sb.items()}, games,
        pairing_numbers(state.entries),
    )

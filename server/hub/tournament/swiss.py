"""Swiss: the pairing cards of a tournament's history, the FIDE Dutch pairing of the next round
(by ``caissify-pairings``, docs/tournaments.md says why that library), and the standings with
their tie-breaks.

A player's *card* is their history as a pairing program sees it: per round, the opponent, the
colour and the result, or a bye. Cards are computed from the state (:func:`cards`), turned into
the library's input (:func:`dutch_input`), and paired (:func:`pair_round`). Players are numbered
(the *pairing number*, TPN) by rating, then name, over every entry, withdrawn or not, so a TRF
export and the pairing agree (:mod:`.trf`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from caissify_pairings import generate_pairings

from server.hub.identity import PlayerId
from server.hub.tournament.state import Entry, TournamentState
from server.hub.tournament.values import Color, StandingRow

__all__ = [
    "CardRound",
    "DutchInput",
    "DutchPlayer",
    "SwissRound",
    "cards",
    "dutch_input",
    "pair_dutch",
    "pair_round",
    "pairing_numbers",
    "round_complete",
    "swiss_standings",
    "tiebreaks",
]

CardKind = Literal["game", "pab", "absent"]


@dataclass(frozen=True)
class CardRound:
    """One round of a player's card.

    ``game``: played against ``opponent`` with ``color``; ``points`` 1, ½, 0, or ``None`` while
    the game runs. ``pab``: the pairing-allocated bye (odd number of players), 1 point.
    ``absent``: not paired in that round (joined later, withdrawn, or a zero-point bye), 0.
    """

    round: int
    kind: CardKind
    points: float | None
    opponent: PlayerId | None = None
    color: Color | None = None


@dataclass(frozen=True)
class SwissRound:
    """The pairing of one round: games as ``(white, black)`` in board order, and the player who
    gets the pairing-allocated bye, if any."""

    round: int
    games: tuple[tuple[PlayerId, PlayerId], ...]
    bye: PlayerId | None


def pairing_numbers(entries: dict[PlayerId, Entry]) -> dict[PlayerId, int]:
    """Each entry's pairing number (1 = highest rating; then by name, then joining order)."""
    order = sorted(entries.values(), key=lambda e: (-e.rating, e.name, e.seq))
    return {entry.player: number for number, entry in enumerate(order, 1)}


def cards(state: TournamentState) -> dict[PlayerId, list[CardRound]]:
    """Every entrant's card over the rounds paired so far (rounds 1..``state.rounds_paired``)."""
    by_round: dict[PlayerId, dict[int, CardRound]] = {p: {} for p in state.entries}
    for game_id, paired in state.games.items():
        result = state.results.get(game_id)
        for player, opponent, color in (
            (paired.white, paired.black, "white"),
            (paired.black, paired.white, "black"),
        ):
            points = result.points_of(player) if result else None
            by_round.setdefault(player, {})[paired.round] = CardRound(
                paired.round, "game", points, opponent, color  # type: ignore[arg-type]
            )
    for bye in state.byes:
        kind: CardKind = "pab" if bye.points == 1.0 else "absent"
        by_round.setdefault(bye.player, {})[bye.round] = CardRound(bye.round, kind, bye.points)
    return {
        player: [rounds.get(r, CardRound(r, "absent", 0.0)) for r in range(1, state.rounds_paired + 1)]
        for player, rounds in by_round.items()
    }


def _score(card: Sequence[CardRound]) -> float:
    return sum(r.points or 0.0 for r in card)


def round_complete(state: TournamentState) -> bool:
    """Whether every game of the rounds paired so far has a result."""
    return all(game_id in state.results for game_id in state.games)


@dataclass(frozen=True)
class DutchPlayer:
    """One player's pairing data for the next round, in the terms of FIDE C.04.3.

    ``colors``: the colours of the games actually played, in order. ``floats``: per round
    paired so far, ``"down"``/``"up"``/``"none"`` (a pairing-allocated bye is a downfloat; a
    round missed is ``"none"``). ``pab``: pairing-allocated byes received.
    """

    number: int
    rating: int
    score: float
    colors: tuple[Color, ...]
    floats: tuple[str, ...]
    opponents: tuple[int, ...]
    pab: int


@dataclass(frozen=True)
class DutchInput:
    """Everything a Dutch pairing program needs for the next round (library-neutral)."""

    round: int
    total_rounds: int
    players: tuple[DutchPlayer, ...]
    """The players to pair (active entries), by pairing number."""


def dutch_input(state: TournamentState, total_rounds: int) -> tuple[DutchInput, dict[int, PlayerId]]:
    """The Dutch input for round ``state.rounds_paired + 1`` and the pairing-number → player map.

    :raises ValueError: a game of an earlier round still has no result.
    """
    if not round_complete(state):
        raise ValueError("the previous round is not finished")
    numbers = pairing_numbers(state.entries)
    all_cards = cards(state)
    # Scores before each round, to tell which games were floats (C.04.3 A.4).
    before: dict[PlayerId, list[float]] = {}
    for player, card in all_cards.items():
        running, scores = 0.0, []
        for r in card:
            scores.append(running)
            running += r.points or 0.0
        before[player] = scores
    players = []
    for entry in state.active():
        card = all_cards[entry.player]
        floats: list[str] = []
        for index, r in enumerate(card):
            if r.kind == "pab":
                floats.append("down")
            elif r.kind == "game" and r.opponent is not None:
                mine, theirs = before[entry.player][index], before[r.opponent][index]
                floats.append("down" if mine > theirs else "up" if mine < theirs else "none")
            else:
                floats.append("none")
        players.append(
            DutchPlayer(
                numbers[entry.player],
                entry.rating,
                _score(card),
                tuple(r.color for r in card if r.kind == "game" and r.color is not None),
                tuple(floats),
                tuple(sorted(numbers[r.opponent] for r in card if r.opponent is not None)),
                sum(1 for r in card if r.kind == "pab"),
            )
        )
    players.sort(key=lambda p: p.number)
    by_number = {number: player for player, number in numbers.items()}
    return DutchInput(state.rounds_paired + 1, total_rounds, tuple(players)), by_number


def pair_dutch(data: DutchInput) -> tuple[list[tuple[int, int]], int | None] | None:
    """The FIDE Dutch pairing of ``data`` by caissify-pairings: ``(white, black)`` pairing
    numbers in board order, and the number given the pairing-allocated bye; ``None`` when no
    legal pairing exists (everyone left has met: the library then hands out several byes)."""
    players = [
        {
            "id": p.number,
            "name": str(p.number),
            "score": p.score,
            "rating": p.rating,
            "starting_number": p.number,
            "pairing_number": p.number,
            "color_hist": list(p.colors),
            "float_history": list(p.floats),
            "bye_count": p.pab,
        }
        for p in data.players
    ]
    previous = {(p.number, o) for p in data.players for o in p.opponents}
    rows = generate_pairings(
        system="dutch",
        players=players,
        previous_pairings=previous,
        round_number=data.round,
        total_rounds=max(data.total_rounds, data.round),
    )
    games: list[tuple[int, int]] = []
    byes: list[int] = []
    for row in sorted(rows, key=lambda r: int(r["table"])):
        if row.get("bye") or row.get("black_id") is None:
            byes.append(int(row["white_id"]))
        else:
            games.append((int(row["white_id"]), int(row["black_id"])))
    if len(byes) > 1:
        return None
    return games, (byes[0] if byes else None)


def pair_round(state: TournamentState, total_rounds: int) -> SwissRound | None:
    """The pairing of the next round of a Swiss (FIDE Dutch) among the active entries, or
    ``None`` when no legal pairing exists (too few players left who have not all met): the
    tournament then ends, as lichess's does.

    Pure and deterministic; about 3 s of CPU for 100 players (docs/tournaments.md): the adapter
    runs it in a process pool, off the event loop.

    :raises ValueError: the previous round has a game without result.
    """
    data, by_number = dutch_input(state, total_rounds)
    if len(data.players) < 2:
        return None
    paired = pair_dutch(data)
    if paired is None:
        return None
    games, bye = paired
    return SwissRound(
        data.round,
        tuple((by_number[w], by_number[b]) for w, b in games),
        by_number[bye] if bye is not None else None,
    )


def tiebreaks(all_cards: dict[PlayerId, list[CardRound]]) -> dict[PlayerId, tuple[float, float]]:
    """Each player's Buchholz cut 1 and Sonneborn–Berger (FIDE C.07).

    Buchholz: the sum of the opponents' final scores, the lowest one left out (cut 1).
    Sonneborn–Berger: the sum of the final scores of the opponents beaten, plus half those of
    the opponents drawn. A round without a game (bye or absence) counts as a game against a
    virtual opponent with the player's own final score (FIDE C.07 §16), scored as the points the
    round brought.
    """
    final = {player: _score(card) for player, card in all_cards.items()}
    result: dict[PlayerId, tuple[float, float]] = {}
    for player, card in all_cards.items():
        contributions: list[float] = []
        sb = 0.0
        for r in card:
            opponent_score = final[r.opponent] if r.opponent is not None else final[player]
            contributions.append(opponent_score)
            sb += opponent_score * (r.points or 0.0)
        contributions.sort()
        result[player] = (sum(contributions[1:]), sb)
    return result


def swiss_standings(state: TournamentState) -> list[StandingRow]:
    """The standings: score, then Buchholz cut 1, then Sonneborn–Berger; players equal on all
    three share a rank (listed by pairing number)."""
    all_cards = cards(state)
    breaks = tiebreaks(all_cards)
    numbers = pairing_numbers(state.entries)
    return ranked_rows(
        state,
        {p: _score(c) for p, c in all_cards.items()},
        {p: (("buchholz_cut1", b[0]), ("sonneborn_berger", b[1])) for p, b in breaks.items()},
        {p: sum(1 for r in c if r.kind == "game" and r.points is not None) for p, c in all_cards.items()},
        numbers,
    )


def ranked_rows(
    state: TournamentState,
    scores: dict[PlayerId, float],
    breaks: dict[PlayerId, tuple[tuple[str, float], ...]],
    games: dict[PlayerId, int],
    numbers: dict[PlayerId, int],
) -> list[StandingRow]:
    """Standings rows ordered by score then tie-breaks (higher first), ties sharing a rank."""
    def key(entry: Entry) -> tuple[float, ...]:
        return (-scores[entry.player], *(-v for _, v in breaks[entry.player]))

    order = sorted(state.entries.values(), key=lambda e: (key(e), numbers[e.player]))
    rows: list[StandingRow] = []
    previous: tuple[float, ...] | None = None
    for index, entry in enumerate(order):
        rank = rows[-1].rank if rows and key(entry) == previous else index + 1
        previous = key(entry)
        rows.append(
            StandingRow(
                rank, entry.player, entry.name, entry.rating, scores[entry.player],
                games[entry.player], entry.status, breaks[entry.player],
            )
        )
    return rows

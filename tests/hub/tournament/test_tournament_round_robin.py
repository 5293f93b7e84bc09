"""Round robin: the Berger tables equal FIDE's published ones (FIDE Handbook C.05, Annex 1:
the tables below are copied from the Handbook, not computed), odd numbers, double cycles."""

from __future__ import annotations

import pytest

from server.hub.tournament.round_robin import (
    berger_round,
    round_count,
    round_robin_round,
    round_robin_standings,
)
from server.hub.tournament.state import replay
from server.hub.tournament.values import Event, Finished, Joined, Paired, Started, TournamentGame

FIDE_BERGER = {
    4: ["1-4 2-3", "4-3 1-2", "2-4 3-1"],
    6: ["1-6 2-5 3-4", "6-4 5-3 1-2", "2-6 3-1 4-5", "6-5 1-4 2-3", "3-6 4-2 5-1"],
    8: [
        "1-8 2-7 3-6 4-5", "8-5 6-4 7-3 1-2", "2-8 3-1 4-7 5-6", "8-6 7-5 1-4 2-3",
        "3-8 4-2 5-1 6-7", "8-7 1-6 2-5 3-4", "4-8 5-3 6-2 7-1",
    ],
    10: [
        "1-10 2-9 3-8 4-7 5-6", "10-6 7-5 8-4 9-3 1-2", "2-10 3-1 4-9 5-8 6-7",
        "10-7 8-6 9-5 1-4 2-3", "3-10 4-2 5-1 6-9 7-8", "10-8 9-7 1-6 2-5 3-4",
        "4-10 5-3 6-2 7-1 8-9", "10-9 1-8 2-7 3-6 4-5", "5-10 6-4 7-3 8-2 9-1",
    ],
}


def parse(line: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in (pair.split("-") for pair in line.split())]


@pytest.mark.parametrize("n", sorted(FIDE_BERGER))
def test_berger_tables_equal_fide(n: int) -> None:
    assert [berger_round(n, r) for r in range(1, n)] == [parse(line) for line in FIDE_BERGER[n]]


@pytest.mark.parametrize("players", range(3, 17))
def test_everyone_meets_everyone_once_per_cycle(players: int) -> None:
    order = [f"p{i}" for i in range(players)]
    for double in (False, True):
        met: dict[frozenset[str], list[str]] = {}
        byes: list[str] = []
        for r in range(1, round_count(players, double) + 1):
            rnd = round_robin_round(order, r, double=double)
            seated = [p for g in rnd.games for p in g] + ([rnd.bye] if rnd.bye else [])
            assert sorted(seated) == sorted(order)
            for white, black in rnd.games:
                met.setdefault(frozenset((white, black)), []).append(white)
            if rnd.bye:
                byes.append(rnd.bye)
        cycles = 2 if double else 1
        assert len(met) == players * (players - 1) // 2
        assert all(len(whites) == cycles for whites in met.values())
        if double:  # colours reversed in the second cycle
            assert all(whites[0] != whites[1] for whites in met.values())
        assert sorted(byes) == (sorted(order * cycles) if players % 2 else [])


def double_table(n: int) -> list[str]:
    """FIDE C.05 Annex 1's advice for double-round tournaments, applied by hand to the tables
    above: the first cycle with its last two rounds in reverse order, then the table in its
    order with colours reversed."""
    first = [*FIDE_BERGER[n][:-2], FIDE_BERGER[n][-1], FIDE_BERGER[n][-2]]
    second = [" ".join("-".join(pair.split("-")[::-1]) for pair in line.split())
              for line in FIDE_BERGER[n]]
    return first + second


@pytest.mark.parametrize("n", sorted(FIDE_BERGER))
def test_double_round_robin_swaps_the_first_cycles_last_two_rounds(n: int) -> None:
    order = [str(number) for number in range(1, n + 1)]
    played = [
        " ".join(f"{w}-{b}" for w, b in round_robin_round(order, r, double=True).games)
        for r in range(1, round_count(n, True) + 1)
    ]
    # Board order within a round is the table's (the board with number n first).
    assert played == double_table(n)
    if n == 4:  # written out: 1-4 2-3 | 2-4 3-1 | 4-3 1-2 || 4-1 3-2 | 3-4 2-1 | 4-2 1-3
        assert played == ["1-4 2-3", "2-4 3-1", "4-3 1-2", "4-1 3-2", "3-4 2-1", "4-2 1-3"]


@pytest.mark.parametrize("players", range(3, 17))
def test_double_round_robin_never_gives_three_same_colours_in_a_row(players: int) -> None:
    """The reason for FIDE's swap: across the cycles' boundary nobody has one colour three
    games in a row (a round sat out skipped); a single round robin has no such boundary."""
    order = [f"p{i}" for i in range(players)]
    colours: dict[str, str] = dict.fromkeys(order, "")
    for r in range(1, round_count(players, True) + 1):
        for white, black in round_robin_round(order, r, double=True).games:
            colours[white] += "W"
            colours[black] += "B"
    assert not [p for p, c in colours.items() if "WWW" in c or "BBB" in c]


def test_odd_number_uses_the_table_of_the_next_even() -> None:
    rnd = round_robin_round(["a", "b", "c", "d", "e"], 1, double=False)
    # Table for 6, round 1: 1-6 2-5 3-4; number 6 is the bye, so player 1 (a) sits out.
    assert rnd.games == (("b", "e"), ("c", "d")) and rnd.bye == "a"
    with pytest.raises(ValueError):
        round_robin_round(["a", "b", "c"], 4, double=False)


def test_standings_with_sonneborn_berger() -> None:
    events: list[Event] = [Joined(p, p.upper(), 1500, 0) for p in "abc"] + [Started(1)]
    games = [("a", "b", "1-0"), ("b", "c", "1-0"), ("c", "a", "1-0")]
    for n, (w, b, res) in enumerate(games):
        events += [Paired(f"g{n}", n + 1, w, b, 2), Finished(f"g{n}", TournamentGame(w, b, res, 30), 3)]  # type: ignore[arg-type]
    rows = round_robin_standings(replay(events))
    # A cycle: everyone 1 point and SB 1 (beat a 1-point player): all share first place.
    assert [(r.rank, r.score, dict(r.tiebreaks)["sonneborn_berger"]) for r in rows] == [(1, 1.0, 1.0)] * 3

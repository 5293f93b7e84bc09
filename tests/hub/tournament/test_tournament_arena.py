"""Arena: lichess's scoring (streaks, berserk) by hand-computed sheets and against a reference
scorer written here, and the pairing rules of a wave as properties (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_support import BLITZ
from tournament_support import settings as make_settings

from server.hub.tournament.arena import (
    ArenaSheet,
    Waiting,
    berserk_control,
    pair_wave,
    waiting_players,
)
from server.hub.tournament.standings import podium, standings
from server.hub.tournament.state import replay
from server.hub.tournament.values import (
    Ended,
    Event,
    Finished,
    Joined,
    Paired,
    Started,
    TournamentGame,
)
from server.rules.record import ResultCode
from server.rules.time_control import Byoyomi, Fischer


def game(white: str, black: str, result: ResultCode, plies: int = 40, wb: bool = False, bb: bool = False) -> TournamentGame:
    return TournamentGame(white, black, result, plies, wb, bb)


def sheet_of(results: list[TournamentGame], player: str) -> ArenaSheet:
    sheet = ArenaSheet()
    for g in results:
        sheet = sheet.add(g, player, 1500)
    return sheet


def test_points_streak_fire_and_its_end() -> None:
    # W W W(fire: 4) D(fire: 2) W W W(4) L(fire: 0) W
    seq: list[ResultCode] = ["1-0", "1-0", "1-0", "1/2-1/2", "1-0", "1-0", "1-0", "0-1", "1-0"]
    sheet = sheet_of([game("a", "x", r) for r in seq], "a")
    assert sheet.points == (2, 2, 4, 2, 2, 2, 4, 0, 2)
    assert sheet.total == 20 and not sheet.fire
    assert sheet_of([game("a", "x", "1-0")] * 2, "a").fire


def test_berserk_bonus_needs_a_win_of_fourteen_plies() -> None:
    a = "a"
    assert sheet_of([game(a, "x", "1-0", 14, wb=True)], a).points == (3,)
    assert sheet_of([game(a, "x", "1-0", 13, wb=True)], a).points == (2,)
    assert sheet_of([game(a, "x", "1/2-1/2", 60, wb=True)], a).points == (1,)
    assert sheet_of([game("x", a, "0-1", 30, bb=True)], a).points == (3,)
    # The opponent's berserk is not ours; on fire the bonus is added after doubling: 4 + 1.
    assert sheet_of([game(a, "x", "1-0", 30, bb=True)], a).points == (2,)
    fire = [game(a, "x", "1-0"), game(a, "x", "1-0"), game(a, "x", "1-0", 30, wb=True)]
    assert sheet_of(fire, a).points == (2, 2, 5)


def test_berserk_halves_the_clock() -> None:
    assert berserk_control(Fischer(180_000, 2_000)) == Fischer(90_000, 0)
    assert berserk_control(Byoyomi(600_000, 30_000, 3)) == Byoyomi(300_000, 30_000, 3)
    assert berserk_control(Byoyomi(0, 30_000, 3)) is None


def reference_points(seq: list[tuple[float, bool, int]]) -> int:
    """An independent scorer: (own result, berserked, plies) per game."""
    total, wins_in_row = 0, 0
    for score, berserked, plies in seq:
        base = {1.0: 2, 0.5: 1, 0.0: 0}[score]
        total += base * (2 if wins_in_row >= 2 else 1) + (score == 1.0 and berserked and plies >= 14)
        wins_in_row = wins_in_row + 1 if score == 1.0 else 0
    return total


results = st.sampled_from(["1-0", "0-1", "1/2-1/2"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), results, st.integers(1, 40), st.booleans(), st.booleans()), max_size=40))
def test_scores_from_events_equal_the_incremental_ones(games: list[tuple[int, int, ResultCode, int, bool, bool]]) -> None:
    players = [f"p{i}" for i in range(5)]
    events: list[Event] = [Joined(p, p, 1500 + 10 * i, i) for i, p in enumerate(players)]
    events.append(Started(10))
    state = replay(events)
    incremental = {p: ArenaSheet() for p in players}
    per_player: dict[str, list[tuple[float, bool, int]]] = {p: [] for p in players}
    for n, (w, b, res, plies, wb, bb) in enumerate(games):
        if w == b:
            continue
        result = TournamentGame(players[w], players[b], res, plies, wb, bb)
        for event in (Paired(f"g{n}", 0, players[w], players[b], 20 + n), Finished(f"g{n}", result, 21 + n)):
            events.append(event)
            state.apply(event)
        for me, opp in ((players[w], players[b]), (players[b], players[w])):
            incremental[me] = incremental[me].add(result, me, state.entries[opp].rating)
            per_player[me].append((result.points_of(me), result.berserk_of(me), plies))
    rows = {row.player: row for row in standings(make_settings("arena"), replay(events))}
    for p in players:
        assert rows[p].score == incremental[p].total == reference_points(per_player[p])
        assert rows[p].sheet == incremental[p].points
        assert rows[p].fire == incremental[p].fire


def test_standings_rank_ties_and_podium() -> None:
    events: list[Event] = [Joined(p, p.upper(), r, 0) for p, r in (("a", 1500), ("b", 1500), ("c", 1400), ("d", 1300))]
    events += [Started(1), Paired("g1", 0, "a", "b", 2), Paired("g2", 0, "c", "d", 2)]
    events += [Finished("g1", game("a", "b", "1/2-1/2"), 3), Finished("g2", game("c", "d", "1-0"), 3)]
    s = make_settings("arena")
    rows = standings(s, replay(events))
    assert [(r.player, r.rank, r.score) for r in rows] == [("c", 1, 2), ("a", 2, 1), ("b", 2, 1), ("d", 4, 0)]
    assert podium(s, replay(events)) == []
    assert [r.player for r in podium(s, replay([*events, Ended(9)]))] == ["c", "a", "b"]


def test_waiting_players_skip_the_busy_and_paused() -> None:
    events: list[Event] = [Joined(p, p, 1500, 0) for p in "abcde"]
    events += [Started(1), Paired("g1", 0, "a", "b", 2), Finished("g1", game("a", "b", "1-0"), 3)]
    events += [Paired("g2", 0, "c", "d", 4)]
    state = replay(events)
    from server.hub.tournament.values import Paused

    state.apply(Paused("e", 5))
    waiting = waiting_players(state, standings(make_settings("arena"), state))
    assert [(w.player, w.last_opponent, w.color_balance) for w in waiting] == [("a", "b", 1), ("b", "a", -1)]
    # Only a and b wait and they just met, while c and d play: nobody is paired.
    assert pair_wave(waiting, others_playing=True) == []
    # Nobody else can come: they meet again, white to the one who had black.
    only = pair_wave(waiting, others_playing=False)
    assert [(p.white, p.black) for p in only] == [("b", "a")]


@st.composite
def waves(draw: st.DrawFn) -> list[Waiting]:
    n = draw(st.integers(0, 60))
    ids = [f"p{i}" for i in range(n)]
    order = draw(st.permutations(range(n)))
    # Last opponents: a random partial matching among the waiting, plus some outside players.
    last: dict[str, str] = {}
    for i in range(0, n - 1, 2):
        if draw(st.booleans()):
            last[ids[order[i]]], last[ids[order[i + 1]]] = ids[order[i + 1]], ids[order[i]]
    return [
        Waiting(p, draw(st.integers(1, n + 1)), draw(st.integers(800, 2800)), last.get(p, draw(st.sampled_from([None, "outside"]))),
                draw(st.integers(-2, 2)), draw(st.sampled_from([None, "white", "black"])))
        for p in ids
    ]


@settings(max_examples=80, deadline=None)
@given(waves(), st.booleans())
def test_wave_pairing_rules(waiting: list[Waiting], others_playing: bool) -> None:
    pairs = pair_wave(waiting, others_playing=others_playing)
    seen = [p for pair in pairs for p in (pair.white, pair.black)]
    by_id = {w.player: w for w in waiting}
    # Nobody twice, nobody who is not waiting, nobody against themselves.
    assert len(seen) == len(set(seen)) and set(seen) <= set(by_id)
    rematches = [p for p in pairs if by_id[p.white].last_opponent == p.black or by_id[p.black].last_opponent == p.white]
    lone_rematch = len(waiting) == 2 and by_id[waiting[0].player].last_opponent == waiting[1].player
    if lone_rematch:
        assert len(pairs) == (0 if others_playing else 1)
    else:
        # Everybody plays but an odd one out, and never their last opponent.
        assert len(pairs) == len(waiting) // 2
        assert rematches == []


def test_wave_pairs_neighbours_in_the_standings() -> None:
    waiting = [Waiting(f"p{i}", i + 1, 2000 - i) for i in range(8)]
    pairs = pair_wave(waiting, others_playing=True)
    assert sorted(tuple(sorted((p.white, p.black))) for p in pairs) == [("p0", "p1"), ("p2", "p3"), ("p4", "p5"), ("p6", "p7")]
    # Colours: fewer whites first.
    skewed = [Waiting("a", 1, 1500, color_balance=1), Waiting("b", 2, 1500, color_balance=-1)]
    assert [(p.white, p.black) for p in pair_wave(skewed, others_playing=True)] == [("b", "a")]
    _ = BLITZ

"""Levels 1–8 and the time a move job may think.

As on lichess (fishnet's Stockfish levels) and pychess-variants: each level caps the search
depth and the time per move, and for Fairy-Stockfish sets its ``Skill Level``; Sjaak II has no
skill option over CECP, so its low levels add evaluation noise (``Random amplitude`` with
``random on``) to a shallow search. HaChu has neither: its levels are depth and time. For both,
at levels 1–3 the worker plays a random legal move instead of the engine's now and then
(``blunder``; at level 1 every second move: with a quarter, a beginner's stand-in that takes
free pieces and keeps its own safe never beat Sjaak II's level 1 in Spartan Chess, 0 of 10;
with a half it scored 6 of 10 — docs/benchmarks.md, "Level 1 against a beginner's stand-in").
Level 8 is the engine's best at the game's clock: no depth cap, the clock handed to the engine
and its search ended at the clock's budget (HaChu: the budget as its time).

Whatever the level, a move job never thinks longer than its clock's budget allows
(:func:`think_limits`): the remaining time over the moves still expected (30), plus most of the
increment or byoyomi, minus the time the job has already spent in the worker, at most 30 s. A
side's first move (no clock runs yet, and the hub aborts a game whose first moves do not come)
thinks at most :data:`FIRST_MOVE_MS`. An engine that has not answered by its move time (a loaded
machine) is waited for up to the clock's bound (3 × that budget, within the time left) before it
counts as hung and the move falls back.
"""

from __future__ import annotations

from dataclasses import dataclass

from .search import EngineClock, SearchLimits

__all__ = [
    "DEADLINE_MARGIN_MS",
    "FIRST_MOVE_MS",
    "LEVELS",
    "Level",
    "level_blunder",
    "level_commands",
    "level_options",
    "search_deadline_ms",
    "think_limits",
]


@dataclass(frozen=True, slots=True)
class Level:
    depth: int | None
    movetime_ms: int | None  # None: the clock decides (level 8)
    skill: int | None = None  # Fairy-Stockfish "Skill Level" (-20..20)
    noise: int | None = None  # Sjaak II "Random amplitude (0 to disable)" (0..100)
    blunder: float = (
        0.0  # the chance of playing a random legal move instead (HaChu: no skill option)
    )
    clock_to_engine: bool = True
    """Level 8 hands the engine the game's clock, to manage as it likes within the clock's
    budget (UCI ``movetime``, CECP ``?`` when it is up: Fairy-Stockfish left to its clock took up
    to 30 s a move in Mini-Shogi on 5 + 3); False: it searches the budget as a fixed move time
    (HaChu, which heeds "?" only between iterations, planned more than a move job may take on
    long clocks, and was killed and replaced by a 0.2 s retry)."""
    unclocked_ms: int | None = None
    """Level 8's time per move in a game without a clock (default :data:`NO_CLOCK_MS`)."""
    depth_bound: bool = False
    """The depth is the level (its move time only a safety net, never reached on an idle core):
    on a clock it searches to its depth within the clock's budget, so a loaded machine changes
    how long it takes, not how deep it sees (:func:`think_limits`)."""


FSF_LEVELS = {
    1: Level(1, 50, skill=-9),
    2: Level(2, 100, skill=-5),
    3: Level(3, 150, skill=-1),
    4: Level(4, 200, skill=3),
    5: Level(6, 300, skill=7),
    6: Level(8, 400, skill=11),
    7: Level(13, 500, skill=16),
    8: Level(None, None, skill=20),
}
SJAAK_LEVELS = {
    1: Level(1, 50, noise=100, blunder=0.5),
    2: Level(2, 100, noise=70, blunder=0.1),
    3: Level(3, 150, noise=50, blunder=0.05),
    4: Level(4, 200, noise=35),
    5: Level(5, 300, noise=20),
    6: Level(7, 400, noise=10),
    7: Level(9, 500, noise=5),
    8: Level(None, None, noise=0),
}
HACHU_LEVELS = {
    # HaChu's depth steps are steep in Dai Shogi: on an idle core depth 3 takes 0.05-0.15 s,
    # depth 4 0.1-0.5 s, depth 5 0.3-5.6 s, depth 6 0.5-8 s (docs/benchmarks.md, "Dai Shogi
    # levels 5-7 bound by depth"). Levels 1-4 are bound by their depth (docs/engines.md,
    # "Levels under load"): on a clock their move time is the clock's budget and their own time
    # a safety net; HaChu heeds "?" only between iterations, which is why a cut at a level's
    # time made a starved level 4 stop at depth 2, or miss its deadline and fall back.
    1: Level(1, 100, blunder=0.5, depth_bound=True),
    2: Level(2, 200, blunder=0.15, depth_bound=True),
    3: Level(2, 300, blunder=0.05, depth_bound=True),
    4: Level(3, 500, depth_bound=True),
    # Levels 5-7 are bound by their time, in wide steps: HaChu's next iteration costs 5-10
    # times the last, so a step of a third more time changed little (1.5 s vs 2 s: 10-10 in 20
    # games), while depth 3 -> 1 s -> 2.5 s -> 7 s scored better at each step (docs/benchmarks.md,
    # "The wide Dai Shogi ladder"). Depth-bound levels 5-7 did worse (same file, "Dai Shogi levels
    # 5-7 bound by depth, tried and dropped").
    5: Level(5, 1000),
    6: Level(8, 2500),
    7: Level(None, 7000),
    # Level 8 searches the clock's budget (up to MAX_THINK_MS); without a clock 15 s, above L7.
    8: Level(None, None, unclocked_ms=15_000, clock_to_engine=False),
}
LEVELS: dict[str, dict[int, Level]] = {
    "fairy-stockfish": FSF_LEVELS,
    "sjaakii": SJAAK_LEVELS,
    "fairymax": SJAAK_LEVELS,
    "hachu": HACHU_LEVELS,
}
NO_CLOCK_MS = 1000
"""Level 8's time per move in a game without a clock."""
OVERHEAD_MS = 150
"""Kept back from every move for the submit and the server's round trip."""
DEADLINE_MARGIN_MS = 1000
"""Past its move time a search gets this long to answer before its engine counts as hung (the
engine was told to move at the move time: only a starved or stuck engine needs more)."""
MIN_THINK_MS = 20
MAX_THINK_MS = 30_000
"""The longest a move may think, whatever the clock: level 8 on a long clock (a 30-minute game
gives a minute's budget) would otherwise hold a worker's core for a minute while other games'
moves wait. A search longer than a job's lease keeps the job with ``/fishnet/keepalive``."""
FIRST_MOVE_MS = 5000
"""The longest a side's first move may think (on a clock that is not running yet): the player
waits for it, and the hub aborts a game whose first moves do not come in time (the computer's
window is long, but a queued job may already have waited). Opening positions gain little from
a long search."""


def search_deadline_ms(movetime_ms: int) -> int:
    """How long a search given ``movetime_ms`` without a clock (a move job, an analysed ply)
    is waited for. A CECP engine is given twice the move time and told to move ("?") when it
    is up; HaChu heeds "?" only between iterations and cuts an iteration itself near the time
    it was given, so it may answer up to twice the move time: a deadline before that counted
    its last iteration as a hung engine (a Dai Shogi analysis at 5 s a ply restarted HaChu)."""
    return max(movetime_ms + 2000, 2 * movetime_ms + DEADLINE_MARGIN_MS)


def level_blunder(engine: str, level: int) -> float:
    return LEVELS[engine][max(1, min(8, level))].blunder


def level_options(engine: str, level: int) -> tuple[tuple[tuple[str, str], ...], Level]:
    """The engine options a level sets, and the level."""
    spec = LEVELS[engine][max(1, min(8, level))]
    options: tuple[tuple[str, str], ...] = ()
    if spec.skill is not None:
        options = (("Skill Level", str(spec.skill)),)
    elif spec.noise is not None and engine == "sjaakii":
        options = (("Random amplitude (0 to disable)", str(spec.noise)),)
    return options, spec


def level_commands(engine: str, level: int) -> tuple[str, ...]:
    """CECP commands a level sends: Sjaak II applies its evaluation noise only with ``random on``
    (measured: without it, the amplitude changes nothing)."""
    if engine != "sjaakii":
        return ()
    return ("random on",) if LEVELS[engine][max(1, min(8, level))].noise else ("random off",)


def budget_ms(clock: EngineClock, expected_moves: int = 30) -> int:
    """What one move may take on this clock: a share of the main time plus most of the
    increment / byoyomi (never more than the time left)."""
    own = max(0, clock.own_ms - OVERHEAD_MS)
    share = own // expected_moves + (clock.increment_ms * 4) // 5
    if clock.byoyomi_ms:
        share += (max(0, clock.byoyomi_ms - OVERHEAD_MS) * 4) // 5 if own < clock.byoyomi_ms else 0
        return max(MIN_THINK_MS, min(share, own + clock.byoyomi_ms - OVERHEAD_MS))
    return max(MIN_THINK_MS, min(share, own // 2 if own else MIN_THINK_MS))


def think_limits(
    engine: str, level: int, clock: EngineClock | None, first_move: bool = False
) -> SearchLimits:
    """The search limits of a move job at ``level`` on ``clock`` (None: no clock);
    ``first_move``: the side's first move of the game (at most :data:`FIRST_MOVE_MS`)."""
    options, spec = level_options(engine, level)
    commands = level_commands(engine, level)
    cap = FIRST_MOVE_MS if first_move else MAX_THINK_MS
    if clock is None:
        movetime = min(cap, spec.movetime_ms or spec.unclocked_ms or NO_CLOCK_MS)
        return SearchLimits(
            movetime_ms=movetime,
            depth=spec.depth,
            options=options,
            commands=commands,
            deadline_ms=search_deadline_ms(movetime),
        )
    budget = min(budget_ms(clock), cap)
    # The clock's bound on any search: what a slow (starved) engine is waited for before it
    # counts as hung and the move falls back; never past the time the clock leaves.
    hard = min(
        MAX_THINK_MS,
        max(budget * 3, MIN_THINK_MS),
        max(MIN_THINK_MS, clock.own_ms + clock.byoyomi_ms - OVERHEAD_MS),
    )
    if spec.movetime_ms is None and spec.clock_to_engine:
        # level 8: the engine manages its clock, and its search ends at the budget
        return SearchLimits(
            clock=clock,
            movetime_ms=budget,
            depth=spec.depth,
            options=options,
            commands=commands,
            deadline_ms=max(hard, budget + DEADLINE_MARGIN_MS),
        )
    if spec.movetime_ms is None or spec.depth_bound:
        movetime = budget
    else:
        movetime = min(spec.movetime_ms, budget)
    return SearchLimits(
        movetime_ms=movetime,
        depth=spec.depth,
        options=options,
        commands=commands,
        deadline_ms=max(hard, movetime + DEADLINE_MARGIN_MS),
    )

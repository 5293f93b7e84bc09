"""Levels 1–8 and the time a move job may think.

As on lichess (fishnet's Stockfish levels) and pychess-variants: each level caps the search
depth and the time per move, and for Fairy-Stockfish sets its ``Skill Level``; Sjaak II has no
skill option over CECP, so its low levels add evaluation noise (``Random amplitude`` with
``random on``) to a shallow search. HaChu has neither: its levels are depth and time. For both,
at levels 1–3 the worker plays a random legal move instead of the engine's now and then
(``blunder``; at level 1 every second move: with a quarter, a beginner's stand-in that takes
free pieces and keeps its own safe never beat Sjaak II's level 1 in Spartan Chess, 0 of 10;
with a half it scored 6 of 10 — docs/benchmarks.md, "Level 1 against a beginner's stand-in").
Level 8 is the engine's
best at the game's clock: no depth cap, the clock handed to the engine.

Whatever the level, a move job never thinks longer than its clock allows
(:func:`think_limits`): the remaining time over the moves still expected, plus most of the
increment or byoyomi, minus the time the job has already spent in the worker. An engine that has
not answered by its move time (a loaded machine) is waited for up to the clock's bound (3 ×
that budget, within the time left) before it counts as hung and the move falls back.
"""

from __future__ import annotations

from dataclasses import dataclass

from .search import EngineClock, SearchLimits

__all__ = [
    "DEADLINE_MARGIN_MS",
    "LEVELS",
    "Level",
    "level_blunder",
    "level_commands",
    "level_options",
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
    # HaChu reaches depth 2-3 in 200 ms and ~4 in 1 s in Dai Shogi, and a deeper iteration
    # costs 5-10 times the last: levels 4 and 5, 0.5 s and 1 s apart, reached the same depth
    # under load and were not separated (docs/benchmarks.md). Level 4 is now capped at depth 3
    # (done in 0.1-0.3 s on an idle core: the cap, not the clock, binds, whatever the load) and
    # level 5 gets 1.5 s for its depth 4; level 3 stays a step below level 4 at depth 2.
    # Levels 1-4 are bound by their depth (docs/engines.md, "Levels under load"): HaChu heeds
    # "?" only between iterations, so a cut at the move time made a starved level 4 stop at
    # depth 2, or miss its deadline and fall back.
    1: Level(1, 100, blunder=0.5, depth_bound=True),
    2: Level(2, 200, blunder=0.15, depth_bound=True),
    3: Level(2, 300, blunder=0.05, depth_bound=True),
    4: Level(3, 500, depth_bound=True),
    5: Level(5, 1500),
    6: Level(6, 2000),
    7: Level(8, 2500),
    8: Level(None, None),
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
MAX_THINK_MS = 15_000
"""A move job's lease is 20 s: no search may come near it."""


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


def think_limits(engine: str, level: int, clock: EngineClock | None) -> SearchLimits:
    """The search limits of a move job at ``level`` on ``clock`` (None: no clock)."""
    options, spec = level_options(engine, level)
    commands = level_commands(engine, level)
    if clock is None:
        movetime = spec.movetime_ms or NO_CLOCK_MS
        return SearchLimits(
            movetime_ms=movetime,
            depth=spec.depth,
            options=options,
            commands=commands,
            deadline_ms=movetime + 2000,
        )
    budget = min(budget_ms(clock), MAX_THINK_MS)
    # The clock's bound on any search: what a slow (starved) engine is waited for before it
    # counts as hung and the move falls back; never past the time the clock leaves.
    hard = min(
        MAX_THINK_MS,
        max(budget * 3, MIN_THINK_MS),
        max(MIN_THINK_MS, clock.own_ms + clock.byoyomi_ms - OVERHEAD_MS),
    )
    if spec.movetime_ms is None:  # level 8: the engine manages its clock, within the budget's bound
        return SearchLimits(
            clock=clock, depth=spec.depth, options=options, commands=commands, deadline_ms=hard
        )
    movetime = budget if spec.depth_bound else min(spec.movetime_ms, budget)
    return SearchLimits(
        movetime_ms=movetime,
        depth=spec.depth,
        options=options,
        commands=commands,
        deadline_ms=max(hard, movetime + DEADLINE_MARGIN_MS),
    )

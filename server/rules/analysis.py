"""Computer analysis of a game: per-ply evaluations and what they say about each move. Pure.

An analysis is a list of :class:`PlyEval`, one per analysed position: entry ``ply`` is the
position after ``ply`` moves (ply 0 = the start), its :class:`FirstPlayerScore` is **from the first
player's view** (sente / white; positive = good for the first player), as lichess stores them
and as the worker submits them (FISHNET.md). A finished position (checkmate, no legal move)
has no entry.

Judgements follow lichess (lila ``Advice`` / ``WinPercent``, documented in docs/engines.md):

* winning chances ``w(cp) = 2 / (1 + exp(-0.00368208 * cp)) - 1`` on [-1, 1];
* a move is judged from the evaluations of the positions before and after it, both turned to
  the mover's view: a drop of the mover's winning chances of at least 0.3 is a **blunder**,
  0.2 a **mistake**, 0.1 an **inaccuracy** (both scores centipawns);
* with a mate score on either side: a mate against the mover appearing where there was none
  (*mate created*), or the mover's forced mate lost (*mate lost*), is a blunder, a mistake if
  the centipawn score on the other side was past 700 (against the mover for a created mate, for
  the mover for a lost one), an inaccuracy past 999; a slower mate is not judged.

Per side: counts of each judgement, the average centipawn loss (scores capped at ±1000, a mate
counted as ±1000, as lichess) and an accuracy: lichess's per-move accuracy from the win% (0–100)
lost, ``103.1668 * exp(-0.04354 * loss) - 3.1669 + 1`` capped to [0, 100]; the game's accuracy
here is the plain mean of the side's move accuracies (lichess weights by volatility and mixes
in a harmonic mean; this is the simpler, documented approximation).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, TypedDict

__all__ = [
    "ANALYSIS_STATES",
    "JUDGEMENTS",
    "JUDGEMENT_GLYPHS",
    "JUDGEMENT_NAGS",
    "MAX_CP",
    "MAX_DEPTH",
    "MAX_MATE",
    "AdviceView",
    "AnalysisError",
    "AnalysisLimits",
    "AnalysisLimitsView",
    "AnalysisRecord",
    "AnalysisState",
    "FirstPlayerScore",
    "Judgement",
    "MoveAdvice",
    "PlyEval",
    "PlyEvalView",
    "ScoreView",
    "SideSummary",
    "SideSummaryView",
    "advices",
    "judge",
    "move_accuracy",
    "mover_of",
    "played_best",
    "summarize",
    "win_chances",
    "win_percent",
]

Judgement = Literal["inaccuracy", "mistake", "blunder"]


# The JSON views of this module's records (their ``as_json``), defined here, where they are
# built, and used by name in the analysis message's payload (server.hub.review_payloads.AnalysisView).


class ScoreView(TypedDict, total=False):
    """Exactly one of ``cp`` and ``mate``."""

    cp: int
    mate: int


class PlyEvalView(TypedDict):
    ply: int
    score: ScoreView
    best: str | None
    pv: str
    depth: int
    nodes: int | None
    time_ms: int


class AdviceView(TypedDict):
    ply: int
    side: int
    judgement: Judgement
    kind: str
    best: str | None


class SideSummaryView(TypedDict):
    inaccuracy: int
    mistake: int
    blunder: int
    moves: int
    acpl: int | None
    accuracy: float | None


class AnalysisLimitsView(TypedDict):
    movetime_ms: int | None
    depth: int | None


JUDGEMENTS: tuple[Judgement, ...] = ("inaccuracy", "mistake", "blunder")
#: The move-assessment glyphs (PGN NAGs $6, $2, $4).
JUDGEMENT_GLYPHS: dict[str, str] = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}
JUDGEMENT_NAGS: dict[str, int] = {"inaccuracy": 6, "mistake": 2, "blunder": 4}
#: Winning-chance drops, largest first (lichess's thresholds on the [-1, 1] scale).
DROP_THRESHOLDS: tuple[tuple[float, Judgement], ...] = (
    (0.3, "blunder"),
    (0.2, "mistake"),
    (0.1, "inaccuracy"),
)
WIN_MULTIPLIER = -0.00368208
#: Centipawn scores beyond this are capped for win% and average loss (lichess's ceiling).
CP_CEILING = 1000

#: Bounds on what an engine may report (anything beyond is refused as malformed).
MAX_CP = 100_000
MAX_MATE = 1_000
MAX_DEPTH = 1_000
MAX_PLY = 100_000
MAX_PV_MOVES = 64
MAX_MOVE_TEXT = 32
_MOVE_TEXT = re.compile(r"[!-~]{1,32}")  # printable ASCII, no spaces


class AnalysisError(ValueError):
    """An evaluation that is malformed (bad type, out of range, unknown field)."""


def _int(obj: Mapping[str, object], key: str, low: int, high: int) -> int:
    value = obj.get(key)
    if type(value) is not int:
        raise AnalysisError(f"{key} must be an integer")
    if not low <= value <= high:
        raise AnalysisError(f"{key} must be between {low} and {high}")
    return value


def _optional_int(obj: Mapping[str, object], key: str, low: int, high: int) -> int | None:
    """Like :func:`_int`, with ``None`` for a missing or ``null`` field."""
    return None if obj.get(key) is None else _int(obj, key, low, high)


@dataclass(frozen=True, slots=True)
class FirstPlayerScore:
    """An evaluation from the first player's view: centipawns, or moves to mate (positive = the
    first player mates, negative = the first player is mated). Exactly one is set."""

    cp: int | None = None
    mate: int | None = None

    def __post_init__(self) -> None:
        if (self.cp is None) == (self.mate is None):
            raise AnalysisError("a score is either cp or mate")
        if self.cp is not None and not -MAX_CP <= self.cp <= MAX_CP:
            raise AnalysisError(f"cp must be between {-MAX_CP} and {MAX_CP}")
        if self.mate is not None and not (0 < abs(self.mate) <= MAX_MATE):
            raise AnalysisError(
                f"mate must be a non-zero integer between {-MAX_MATE} and {MAX_MATE}"
            )

    @classmethod
    def from_json(cls, obj: object) -> FirstPlayerScore:
        if not isinstance(obj, dict) or len(obj) != 1 or not ({"cp", "mate"} & obj.keys()):
            raise AnalysisError('score must be {"cp": int} or {"mate": int}')
        if "cp" in obj:
            return cls(cp=_int(obj, "cp", -MAX_CP, MAX_CP))
        return cls(mate=_int(obj, "mate", -MAX_MATE, MAX_MATE))

    def as_json(self) -> ScoreView:
        return {"cp": self.cp} if self.cp is not None else {"mate": self.mate or 0}

    def for_side(self, side: int) -> FirstPlayerScore:
        """The same evaluation from ``side``'s view (0 = the first player: itself); for side 1
        the signs are turned, so the result reads as if ``side`` were first (:func:`judge` and
        :func:`summarize` work in the mover's view)."""
        if side == 0:
            return self
        return (
            FirstPlayerScore(-self.cp)
            if self.cp is not None
            else FirstPlayerScore(mate=-(self.mate or 0))
        )

    def capped_cp(self) -> int:
        """Centipawns capped at ±1000; a mate is ±1000 (lichess's ``ceilingWithSignum``)."""
        if self.mate is not None:
            return CP_CEILING if self.mate > 0 else -CP_CEILING
        return max(-CP_CEILING, min(CP_CEILING, self.cp or 0))

    def pgn_text(self) -> str:
        """The value of a PGN ``[%eval …]`` command: pawns with two decimals (``0.35``,
        ``-1.20``) or ``#n`` / ``#-n`` for a mate (lichess's format, python-chess reads it)."""
        if self.mate is not None:
            return f"#{self.mate}"
        return f"{(self.cp or 0) / 100:.2f}"


def win_chances(cp: float) -> float:
    """Winning chances on [-1, 1] for a centipawn score (lichess's logistic curve)."""
    exponent = max(-700.0, min(700.0, WIN_MULTIPLIER * cp))  # exp overflows past ~709
    value = 2 / (1 + math.exp(exponent)) - 1
    return max(-1.0, min(1.0, value))


def win_percent(score: FirstPlayerScore) -> float:
    """Win% on [0, 100] from the score's own view (capped cp; a mate = ±1000 cp)."""
    return 50 + 50 * win_chances(score.capped_cp())


@dataclass(frozen=True, slots=True)
class PlyEval:
    """The engine's view of the position after ``ply`` moves."""

    ply: int
    score: FirstPlayerScore
    best: str | None = None
    pv: tuple[str, ...] = ()
    depth: int = 0
    nodes: int | None = None
    time_ms: int = 0

    @classmethod
    def from_json(cls, obj: object) -> PlyEval:
        """An entry as the worker submits it (FISHNET.md); :class:`AnalysisError` if malformed."""
        if not isinstance(obj, dict):
            raise AnalysisError("an analysis entry must be an object")
        unknown = set(obj) - {"ply", "score", "best", "pv", "depth", "nodes", "time_ms"}
        if unknown:
            raise AnalysisError(f"unknown field {sorted(unknown)[0]!r}")
        best = obj.get("best")
        if best is not None and not (isinstance(best, str) and _MOVE_TEXT.fullmatch(best)):
            raise AnalysisError("best must be a move text or null")
        pv_text = obj.get("pv", "")
        if not isinstance(pv_text, str) or len(pv_text) > MAX_PV_MOVES * (MAX_MOVE_TEXT + 1):
            raise AnalysisError("pv must be a string of moves")
        pv = tuple(pv_text.split())
        if len(pv) > MAX_PV_MOVES or not all(_MOVE_TEXT.fullmatch(m) for m in pv):
            raise AnalysisError(f"pv must be at most {MAX_PV_MOVES} move texts")
        return cls(
            ply=_int(obj, "ply", 0, MAX_PLY),
            score=FirstPlayerScore.from_json(obj.get("score")),
            best=best,
            pv=pv,
            depth=_int(obj, "depth", 0, MAX_DEPTH) if "depth" in obj else 0,
            nodes=_optional_int(obj, "nodes", 0, 2**62),
            time_ms=_optional_int(obj, "time_ms", 0, 2**31) or 0,
        )

    def as_json(self) -> PlyEvalView:
        return {
            "ply": self.ply,
            "score": self.score.as_json(),
            "best": self.best,
            "pv": " ".join(self.pv),
            "depth": self.depth,
            "nodes": self.nodes,
            "time_ms": self.time_ms,
        }


def mover_of(ply: int, first_mover: int = 0) -> int:
    """The side that made move ``ply`` (1-based) when ``first_mover`` was to move at ply 0."""
    return (first_mover + ply - 1) % 2


def judge(
    before: FirstPlayerScore, after: FirstPlayerScore, mover: int
) -> tuple[Judgement, str] | None:
    """lichess's judgement of a move by ``mover`` from the scores (first player's view) of the
    positions before and after it: ``(judgement, kind)`` with kind ``cp``, ``mate_created``
    or ``mate_lost``, or None for a move without remark."""
    prev = before.for_side(mover)
    now = after.for_side(mover)
    if prev.cp is not None and now.cp is not None:
        drop = win_chances(prev.cp) - win_chances(now.cp)
        for threshold, name in DROP_THRESHOLDS:
            if drop >= threshold:
                return name, "cp"
        return None
    prev_cp = prev.cp or 0
    now_cp = now.cp or 0
    if prev.mate is None and now.mate is not None and now.mate < 0:
        if prev_cp < -999:
            return "inaccuracy", "mate_created"
        return ("mistake" if prev_cp < -700 else "blunder"), "mate_created"
    if prev.mate is not None and prev.mate > 0 and (now.mate is None or now.mate < 0):
        if now_cp > 999:
            return "inaccuracy", "mate_lost"
        return ("mistake" if now_cp > 700 else "blunder"), "mate_lost"
    return None


@dataclass(frozen=True, slots=True)
class MoveAdvice:
    """A judged move: move ``ply`` (1-based) by ``side``; ``best`` is what the engine
    preferred in the position before it (None if unknown)."""

    ply: int
    side: int
    judgement: Judgement
    kind: str
    best: str | None

    def as_json(self) -> AdviceView:
        return {
            "ply": self.ply,
            "side": self.side,
            "judgement": self.judgement,
            "kind": self.kind,
            "best": self.best,
        }


def _by_ply(evals: Iterable[PlyEval]) -> dict[int, PlyEval]:
    return {e.ply: e for e in evals}


def played_best(before: PlyEval, ply: int, moves: Sequence[str]) -> bool:
    """Whether move ``ply`` (1-based) of ``moves`` (the game's move texts) is the engine's own
    best move in the position before it. Such a move is never judged and loses nothing: its
    value is the score of the position before it (one search, the depth the engine reached
    there); the search of the position after it, at its own depth, is not compared with it."""
    return before.best is not None and 0 < ply <= len(moves) and moves[ply - 1] == before.best


def advices(
    evals: Iterable[PlyEval], first_mover: int = 0, moves: Sequence[str] = ()
) -> list[MoveAdvice]:
    """The judged moves of an analysis, by ply: every move whose positions before and after
    both have an evaluation, that is not the engine's best move there (``moves``: the game's
    move texts, :func:`played_best`), and whose judgement is not None."""
    table = _by_ply(evals)
    found: list[MoveAdvice] = []
    for ply in sorted(table):
        before = table.get(ply - 1)
        if ply == 0 or before is None or played_best(before, ply, moves):
            continue
        side = mover_of(ply, first_mover)
        verdict = judge(before.score, table[ply].score, side)
        if verdict is not None:
            found.append(MoveAdvice(ply, side, verdict[0], verdict[1], before.best))
    return found


@dataclass(slots=True)
class SideSummary:
    """One side's totals over the analysed moves."""

    inaccuracies: int = 0
    mistakes: int = 0
    blunders: int = 0
    moves: int = 0
    acpl: int | None = None
    accuracy: float | None = None
    _losses: list[int] = field(default_factory=list, repr=False)
    _accuracies: list[float] = field(default_factory=list, repr=False)

    def as_json(self) -> SideSummaryView:
        return {
            "inaccuracy": self.inaccuracies,
            "mistake": self.mistakes,
            "blunder": self.blunders,
            "moves": self.moves,
            "acpl": self.acpl,
            "accuracy": self.accuracy,
        }


def move_accuracy(win_before: float, win_after: float) -> float:
    """lichess's accuracy (0–100) of one move from the mover's win% before and after."""
    if win_after >= win_before:
        return 100.0
    raw = 103.1668 * math.exp(-0.04354 * (win_before - win_after)) - 3.1669 + 1
    return max(0.0, min(100.0, raw))


def summarize(
    evals: Sequence[PlyEval], first_mover: int = 0, moves: Sequence[str] = ()
) -> tuple[SideSummary, SideSummary]:
    """Per-side counts, average centipawn loss and accuracy (first player, second player); the
    engine's own best move (:func:`played_best`) loses nothing."""
    sides = (SideSummary(), SideSummary())
    for advice in advices(evals, first_mover, moves):
        s = sides[advice.side]
        if advice.judgement == "blunder":
            s.blunders += 1
        elif advice.judgement == "mistake":
            s.mistakes += 1
        else:
            s.inaccuracies += 1
    table = _by_ply(evals)
    for ply in sorted(table):
        before = table.get(ply - 1)
        if ply == 0 or before is None:
            continue
        side = mover_of(ply, first_mover)
        prev = before.score.for_side(side)
        now = prev if played_best(before, ply, moves) else table[ply].score.for_side(side)
        s = sides[side]
        s.moves += 1
        s._losses.append(max(0, prev.capped_cp() - now.capped_cp()))
        s._accuracies.append(move_accuracy(win_percent(prev), win_percent(now)))
    for s in sides:
        if s.moves:
            s.acpl = round(sum(s._losses) / s.moves)
            s.accuracy = round(sum(s._accuracies) / s.moves, 1)
    return sides


AnalysisState = Literal["queued", "running", "done", "failed"]
ANALYSIS_STATES: tuple[AnalysisState, ...] = ("queued", "running", "done", "failed")


@dataclass(frozen=True, slots=True)
class AnalysisLimits:
    """What the engine may spend per analysed position: a move time, a depth, or both (the
    search stops at the first reached)."""

    movetime_ms: int | None = None
    depth: int | None = None

    def as_json(self) -> AnalysisLimitsView:
        return {"movetime_ms": self.movetime_ms, "depth": self.depth}


@dataclass(frozen=True, slots=True)
class AnalysisRecord:
    """A stored analysis of one game: its request, progress and per-ply evaluations (by ply).

    ``plies_total`` counts the positions to analyse (the start and every position after a
    move that still has a move to make); ``plies_done`` those with an evaluation."""

    game_id: str
    state: AnalysisState
    requested_by: str | None
    limits: AnalysisLimits
    plies_total: int
    evals: tuple[PlyEval, ...] = ()
    error: str | None = None
    created_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def plies_done(self) -> int:
        return len(self.evals)

"""What a protocol driver is asked (a position and limits) and what it answers (a search
result), in the engine's own move texts; :mod:`.dialects` translates to and from ours."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.rules.analysis import ScoreView

__all__ = ["EngineClock", "EnginePosition", "SearchLimits", "SearchResult", "SideToMoveScore"]


@dataclass(frozen=True, slots=True)
class EnginePosition:
    """A position as an engine is given it: its variant name (None: its default game), a
    start FEN in its dialect (None: the variant's own start) and moves in its dialect."""

    variant: str | None
    fen: str | None
    moves: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EngineClock:
    """Clock state for a search, the engine's side first (milliseconds)."""

    own_ms: int
    other_ms: int
    increment_ms: int = 0
    byoyomi_ms: int = 0
    engine_is_first: bool = True


@dataclass(frozen=True, slots=True)
class SearchLimits:
    """Stop at ``movetime_ms`` or ``depth`` (whichever first), or as the ``clock`` says.

    ``deadline_ms`` is the hard limit: a driver that has no move by then tells the engine to
    move now, and one that still has none a grace period later gives up on the engine."""

    movetime_ms: int | None = None
    depth: int | None = None
    clock: EngineClock | None = None
    deadline_ms: int = 10_000
    options: tuple[tuple[str, str], ...] = ()
    commands: tuple[str, ...] = ()  # extra engine commands before the search (CECP)
    searchmoves: tuple[str, ...] = ()  # UCI: only these moves (engine texts) at the root


@dataclass(frozen=True, slots=True)
class SideToMoveScore:
    """``cp`` centipawns, or ``mate`` in moves (positive: the side to move mates)."""

    cp: int | None = None
    mate: int | None = None

    def first_players_json(self, turn: int) -> ScoreView:
        """This score from the first player's view (the analysis's, FISHNET.md), when ``turn``
        (0 = the first player) is to move."""
        sign = 1 if turn == 0 else -1
        if self.mate is not None:
            return {"mate": sign * self.mate}
        return {"cp": sign * (self.cp or 0)}


@dataclass(slots=True)
class SearchResult:
    """A search's answer, in the engine's move texts; the score is the side to move's."""

    bestmove: str | None
    pv: list[str] = field(default_factory=list)
    score: SideToMoveScore | None = None
    depth: int = 0
    nodes: int | None = None
    time_ms: int = 0

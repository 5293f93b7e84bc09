"""CECP (XBoard/WinBoard protocol 2) driver: Sjaak II, HaChu, Fairy-Max.

Each search sets the game up afresh: ``new``, ``variant X`` (after ``new``: Sjaak II resets
the variant on ``new``), ``force``, ``setboard FEN`` (when a FEN is given), the moves (with
``usermove`` when the engine asked for it), ``ping`` to learn whether it accepted them all,
then the time control and ``go``. ``memory N`` is sent once after the handshake, before any
search (HaChu segfaults on its first search without it).

Time: a fixed move time is given as one move per session (``level 1 1 0``) with ``time`` and
``otim`` set to twice it (CECP engines spend about half of what they are given) and ``?`` sent
when it is up — but never past the search's deadline less a second: HaChu heeds ``?`` only
between iterations and cuts an iteration itself near the time it was given, and that cut must
come before the deadline, or its last iteration counts as a hung engine. A game clock is given
as ``level 0 …`` with the remaining times (``time``/``otim`` in centiseconds; byoyomi, which
CECP lacks, is added to the remaining time as a per-move increment), and a move time given with
it (level 8: the clock's budget) sends ``?`` when it is up. ``sd`` caps the depth.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable, Sequence

from .process import EngineHung, EngineProcess, EngineRefused
from .search import EnginePosition, SearchLimits, SearchResult, SideToMoveScore

__all__ = ["CecpEngine", "parse_thinking"]

HANDSHAKE_S = 5.0
GRACE_S = 1.0  # after "?" (move now), before the engine is given up
SETUP_S = 2.0
ENGINE_CUT_MARGIN_MS = 1000
"""A fixed move time's engine clock ends this long before the search's deadline."""
SETUP_S_PER_LINE = 0.03
_THINKING = re.compile(r"^\s*(\d+)\s+(-?\d+)\s+(\d+)\s+(\d+)\s*(.*)$")
_MOVE_NUMBER = re.compile(r"^(\d+\.+|\.+)$")
_RESULT = re.compile(r"^(1-0|0-1|1/2-1/2)\b")
MATE_BASE = 100_000  # the XBoard convention: mate in n moves scores 100000 + n


def parse_thinking(
    line: str, mate_score: int | None = None
) -> tuple[int, SideToMoveScore, int, int, list[str]] | None:
    """``ply score time nodes pv`` → (depth, score, time in ms, nodes, pv tokens).

    Mate: the XBoard convention (100000 + n moves), or an engine's own ``mate_score`` minus
    the plies to mate (Sjaak II: 16000 − plies)."""
    m = _THINKING.match(line)
    if not m:
        return None
    depth, score, centis, nodes = (int(x) for x in m.groups()[:4])
    pv = [
        t for t in m.group(5).split() if not _MOVE_NUMBER.match(t) and not t.startswith(("{", "("))
    ]
    if abs(score) >= MATE_BASE:
        moves = abs(score) - MATE_BASE
        value = SideToMoveScore(mate=moves if score > 0 else -moves)
    elif mate_score is not None and mate_score - 1000 < abs(score) <= mate_score:
        moves = (mate_score - abs(score) + 1) // 2
        value = SideToMoveScore(mate=moves if score > 0 else -moves)
    else:
        value = SideToMoveScore(cp=score)
    return depth, value, centis * 10, nodes, pv


class CecpEngine:
    """One CECP engine process and its protocol state."""

    protocol = "cecp"

    def __init__(
        self,
        argv: Sequence[str],
        memory_mb: int = 64,
        nice: int = 0,
        name: str | None = None,
        mate_score: int | None = None,
    ) -> None:
        self.process = EngineProcess(argv, nice=nice, name=name)
        self.mate_score = mate_score
        self.memory_mb = memory_mb
        self.features: dict[str, str] = {}
        self._ping = 0
        # What the engine's board holds after the last search (variant, FEN, moves incl. its
        # own reply), and whether a depth limit is set: the next search of the same game
        # sends only the new moves (HaChu takes ~9 ms per move replayed in Dai Shogi).
        self._board: tuple[str | None, str | None, tuple[str, ...]] | None = None
        self._depth_set = False

    @property
    def name(self) -> str:
        return self.process.name

    @property
    def version(self) -> str:
        return self.features.get("myname", self.name)

    async def start(self) -> None:
        await self.process.start()
        self.process.send("xboard", "protover 2")
        deadline = time.monotonic() + HANDSHAKE_S
        while True:
            line = await self.process.readline(deadline)
            if line.startswith("feature "):
                self.features.update(_features(line[len("feature ") :]))
                if self.features.get("done") == "1":
                    break
        self.process.send(f"memory {self.memory_mb}", "easy", "post")
        await self._sync(time.monotonic() + HANDSHAKE_S)

    async def close(self) -> None:
        await self.process.close("quit")

    async def _sync(self, deadline: float) -> list[str]:
        """Send ``ping`` and read up to its ``pong``: the lines read meanwhile (errors)."""
        if self.features.get("ping") != "1":
            return []
        self._ping += 1
        self.process.send(f"ping {self._ping}")
        seen: list[str] = []
        while True:
            line = await self.process.readline(deadline)
            if line == f"pong {self._ping}":
                return seen
            seen.append(line)

    def _setup(self, position: EnginePosition, limits: SearchLimits) -> list[str]:
        prefix = "usermove " if self.features.get("usermove") == "1" else ""
        board, self._board = self._board, None
        if (
            board is not None
            and board[:2] == (position.variant, position.fen)
            and position.moves[: len(board[2])] == board[2]
            and not (self._depth_set and limits.depth is None)  # only "new" lifts an "sd"
        ):
            lines = ["force"]
            lines.extend(f"option {name}={value}" for name, value in limits.options)
            lines.extend(limits.commands)
            lines.extend(prefix + m for m in position.moves[len(board[2]) :])
            return lines
        self._depth_set = False
        lines = ["new"]
        if position.variant:
            lines.append("variant " + position.variant)
        lines.append("force")
        for name, value in limits.options:
            lines.append(f"option {name}={value}")
        lines.extend(limits.commands)
        if position.fen:
            lines.append("setboard " + position.fen)
        lines.extend(prefix + m for m in position.moves)
        return lines

    def _time_control(self, limits: SearchLimits, spent_ms: int) -> list[str]:
        lines = []
        clock = limits.clock
        if clock is not None:
            increment = (clock.increment_ms + clock.byoyomi_ms) / 1000
            own = max(0, clock.own_ms - spent_ms) + (
                clock.byoyomi_ms if clock.increment_ms == 0 else 0
            )
            lines += [
                f"level 0 {max(1, own // 60000)} {increment:g}",
                f"time {own // 10}",
                f"otim {clock.other_ms // 10}",
            ]
        elif limits.movetime_ms is not None:
            given = min(
                2 * limits.movetime_ms,
                max(limits.movetime_ms, limits.deadline_ms - ENGINE_CUT_MARGIN_MS),
            )
            centis = max(1, given // 10)
            lines += ["level 1 1 0", f"time {centis}", f"otim {centis}"]
        if limits.depth is not None:
            lines.append(f"sd {limits.depth}")
            self._depth_set = True
        return lines

    async def search(
        self,
        position: EnginePosition,
        limits: SearchLimits,
        on_info: Callable[[SearchResult], None] | None = None,
    ) -> SearchResult:
        """Search ``position`` within ``limits``; raise EngineError if the engine failed."""
        begun = time.monotonic()
        setup = self._setup(position, limits)
        # Setting the game up is not thinking: it has its own deadline (HaChu takes ~10 ms a
        # move replayed in Dai Shogi); on a clock, the time it took is taken off the engine's.
        self.process.send(*setup)
        for line in await self._sync(begun + SETUP_S + SETUP_S_PER_LINE * len(setup)):
            if line.startswith(("Illegal move", "Error")) or "tellusererror" in line:
                self._board = None
                raise EngineRefused(f"{self.name} refused the position: {line}")
        started = time.monotonic()
        deadline = started + limits.deadline_ms / 1000
        self.process.send(*self._time_control(limits, int((started - begun) * 1000)), "go")
        # A fixed move time is given to the engine doubled, and "?" (move now) is sent when it
        # is up: CECP engines spend about half of what they are given, so this is what makes
        # a level's or an analysis's time per move the time actually searched.
        # On a clock with a move time (level 8), the engine plans with its clock and "?" ends
        # the search at the clock's budget.
        stop_at = None
        if limits.movetime_ms is not None:
            stop_at = min(deadline, started + limits.movetime_ms / 1000)
        result = SearchResult(None)
        moved_now = False
        while True:
            try:
                line = await self.process.readline(stop_at if stop_at is not None else deadline)
            except EngineHung:
                if stop_at is not None and time.monotonic() < deadline:
                    stop_at = None
                    self.process.send("?")
                    continue
                if moved_now:
                    raise
                moved_now = True
                self.process.send("?")
                deadline = time.monotonic() + GRACE_S
                stop_at = None
                continue
            if line.startswith("move "):
                result.bestmove = line.split()[1]
                break
            if _RESULT.match(line) or line.startswith("resign") or line.startswith("Illegal move"):
                break  # the engine thinks the game is over, or refused: no move
            info = parse_thinking(line, self.mate_score)
            if info is not None:
                result.depth, result.score, result.time_ms, result.nodes, result.pv = info
                if on_info is not None:
                    on_info(result)
        result.time_ms = int((time.monotonic() - started) * 1000)
        # Take the engine's own move back: its board is then the position searched, and the
        # next search of this game (the reply, or the next ply analysed) only adds moves.
        self.process.send("force", *(["undo"] if result.bestmove is not None else []))
        await self._sync(
            time.monotonic() + GRACE_S
        )  # whatever it still says belongs to this search
        self._board = (position.variant, position.fen, position.moves)
        return result


def _features(text: str) -> dict[str, str]:
    """``a=1 b="x y"`` → {"a": "1", "b": "x y"} (a malformed tail is ignored)."""
    out = {}
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    for word in words:
        key, eq, value = word.partition("=")
        if eq:
            out[key] = value
    return out

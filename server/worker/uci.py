"""UCI / USI driver: Fairy-Stockfish.

``uci`` → ``uciok``; options with ``setoption`` (``UCI_Variant``, ``Skill Level``,
``VariantPath`` …) only when they change; ``position fen F moves …``; ``isready`` →
``readyok`` to know the engine took it; ``go movetime/depth/wtime/btime/winc/binc/byoyomi``;
``info … score cp|mate … pv …``; ``bestmove X``. Past the deadline: ``stop``, then a grace
period, then the engine is given up (the caller kills and restarts it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from .process import EngineHung, EngineProcess, EngineRefused
from .search import EnginePosition, SearchLimits, SearchResult, SideToMoveScore

__all__ = ["UciEngine", "parse_info"]

HANDSHAKE_S = 5.0
GRACE_S = 1.0


def parse_info(
    line: str,
) -> tuple[int | None, SideToMoveScore | None, int | None, list[str]] | None:
    """An ``info`` line → (depth, score, nodes, pv); None for other lines or no score."""
    words = line.split()
    if not words or words[0] != "info" or "score" not in words:
        return None
    depth = nodes = None
    score = None
    pv: list[str] = []
    i = 1
    try:
        while i < len(words):
            word = words[i]
            if word == "depth":
                depth = int(words[i + 1])
                i += 2
            elif word == "nodes":
                nodes = int(words[i + 1])
                i += 2
            elif word == "score":
                kind, value = words[i + 1], int(words[i + 2])
                score = SideToMoveScore(cp=value) if kind == "cp" else SideToMoveScore(mate=value)
                i += 3
                if i < len(words) and words[i] in ("lowerbound", "upperbound"):
                    i += 1
            elif word == "pv":
                pv = words[i + 1 :]
                break
            elif word == "string":
                break
            else:
                i += 1
    except (IndexError, ValueError):
        return None
    return depth, score, nodes, pv


class UciEngine:
    """One UCI engine process and its protocol state."""

    protocol = "uci"

    def __init__(
        self, argv: Sequence[str], nice: int = 0, name: str | None = None, hash_mb: int = 16
    ) -> None:
        self.process = EngineProcess(argv, nice=nice, name=name)
        self.id_name = self.process.name
        self.hash_mb = hash_mb
        self._options: dict[str, str] = {}

    @property
    def name(self) -> str:
        return self.process.name

    @property
    def version(self) -> str:
        return self.id_name

    async def start(self) -> None:
        await self.process.start()
        self._options = {}
        self.process.send("uci")
        deadline = time.monotonic() + HANDSHAKE_S
        while True:
            line = await self.process.readline(deadline)
            if line.startswith("id name "):
                self.id_name = line[len("id name ") :]
            if line == "uciok":
                break
        self._set_options([("Hash", str(self.hash_mb))])
        await self._ready(deadline)

    async def close(self) -> None:
        await self.process.close("quit")

    def _set_options(self, options: Sequence[tuple[str, str]]) -> None:
        for name, value in options:
            if self._options.get(name) != value:
                self.process.send(f"setoption name {name} value {value}")
                self._options[name] = value

    async def _ready(self, deadline: float) -> None:
        self.process.send("isready")
        while await self.process.readline(deadline) != "readyok":
            pass

    def _go(self, limits: SearchLimits) -> str:
        words = ["go"]
        clock = limits.clock
        if clock is not None:
            first, second = (
                (clock.own_ms, clock.other_ms)
                if clock.engine_is_first
                else (clock.other_ms, clock.own_ms)
            )
            words += ["wtime", str(first), "btime", str(second)]
            if clock.increment_ms:
                words += ["winc", str(clock.increment_ms), "binc", str(clock.increment_ms)]
            if clock.byoyomi_ms:
                words += ["byoyomi", str(clock.byoyomi_ms)]
        if limits.movetime_ms is not None:
            words += ["movetime", str(max(1, limits.movetime_ms))]
        if limits.depth is not None:
            words += ["depth", str(limits.depth)]
        if limits.searchmoves:
            words += ["searchmoves", *limits.searchmoves]
        return " ".join(words)

    async def search(
        self,
        position: EnginePosition,
        limits: SearchLimits,
        on_info: Callable[[SearchResult], None] | None = None,
    ) -> SearchResult:
        started = time.monotonic()
        deadline = started + limits.deadline_ms / 1000
        options = list(limits.options)
        if position.variant:
            options.insert(0, ("UCI_Variant", position.variant))
        self._set_options(options)
        where = f"fen {position.fen}" if position.fen else "startpos"
        moves = " moves " + " ".join(position.moves) if position.moves else ""
        self.process.send(f"position {where}{moves}")
        await self._ready(deadline)
        self.process.send(self._go(limits))
        result = SearchResult(None)
        stopped = False
        while True:
            try:
                line = await self.process.readline(deadline)
            except EngineHung:
                if stopped:
                    raise
                stopped = True
                self.process.send("stop")
                deadline = time.monotonic() + GRACE_S
                continue
            if line.startswith("bestmove"):
                words = line.split()
                move = words[1] if len(words) > 1 else "(none)"
                result.bestmove = None if move in ("(none)", "0000") else move
                break
            info = parse_info(line)
            if info is not None:
                depth, score, nodes, pv = info
                if score is not None:
                    result.score = score
                result.depth = depth or result.depth
                result.nodes = nodes
                if pv:
                    result.pv = pv
                if on_info is not None:
                    on_info(result)
            elif line.startswith("info string") and "invalid" in line.lower():
                raise EngineRefused(f"{self.name} refused the position: {line}")
        result.time_ms = int((time.monotonic() - started) * 1000)
        return result

"""Where a move's round trip goes inside the hub, for ``bench_load.py --phases``.

Run inside the hub process by ``hub_probe.py`` when ``BENCH_PHASES`` is set. It wraps a few
functions of the server (never in production: this module is only imported by the probe) and
records, for each move frame, microseconds from the frame reaching ``_on_frame`` to:

* ``queued``: the move handed to the move writer (``MoveWriter.submit``): parsing, the hub, the
  rules engine's check of the move;
* ``sent``: the batch holding it handed to the database driver (``PgMoveAppender``);
* ``committed``: the database answered the commit;
* ``released``: the driver told of the commit (``HubDriver._move_written``);
* ``written``: the hub released the move and every recipient's frames are in the kernel (the
  driver flushes the outboxes before it returns).

Moves are told apart by their game (a game has one move in flight), so any number of games may
play; the medians are reported with each measurement window, with the count of moves.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

try:  # the speed extra; hub_probe.py imports this module whether or not it is installed
    from orjson import loads
except ImportError:  # pragma: no cover
    from json import loads

from server.store import pg_moves, writer
from server.transport import driver, server

PHASES = ("queued", "sent", "committed", "released", "written")


class MovePhases:
    """See the module docstring. :meth:`install` once, :meth:`report` per window."""

    def __init__(self) -> None:
        self._marks: dict[str, dict[str, float]] = {}
        """By game: the marks of its move in flight."""
        self._samples: list[tuple[float, ...]] = []

    def install(self) -> None:
        marks = self._marks
        samples = self._samples
        on_frame = server.ClientConnection._on_frame

        def timed_on_frame(conn: Any, data: str | bytes) -> Any:
            now = time.perf_counter()
            if isinstance(data, str) and '"move"' in data:
                try:
                    game = loads(data)["d"]["game"]
                except Exception:
                    pass
                else:
                    marks[game] = {"frame": now}
            return on_frame(conn, data)

        submit = writer.MoveWriter.submit

        def timed_submit(self: Any, game_id: str, move: Any, written: Any) -> None:
            mark = marks.get(game_id)
            if mark is not None:
                mark["queued"] = time.perf_counter()
            submit(self, game_id, move, written)

        append = pg_moves.PgMoveAppender.append_moves

        async def timed_append(self: Any, moves: Sequence[Any]) -> None:
            games = [marks.get(game_id) for game_id, _ in moves]
            now = time.perf_counter()
            for mark in games:
                if mark is not None:
                    mark["sent"] = now
            await append(self, moves)
            now = time.perf_counter()
            for mark in games:
                if mark is not None:
                    mark["committed"] = now

        move_written = driver.HubDriver._move_written

        def timed_move_written(self: Any, effect: Any, error: Any) -> None:
            mark = marks.pop(effect.record.game_id, None)
            start = time.perf_counter()
            move_written(self, effect, error)
            if mark is not None and error is None:
                mark["released"] = start
                mark["written"] = time.perf_counter()
                if all(p in mark for p in PHASES):
                    begin = mark["frame"]
                    samples.append(tuple(1e6 * (mark[p] - begin) for p in PHASES))

        server.ClientConnection._on_frame = timed_on_frame  # type: ignore[method-assign,assignment]
        writer.MoveWriter.submit = timed_submit  # type: ignore[method-assign]
        pg_moves.PgMoveAppender.append_moves = timed_append  # type: ignore[method-assign]
        driver.HubDriver._move_written = timed_move_written  # type: ignore[method-assign]

    def report(self) -> dict[str, float]:
        """Median µs from the frame to each phase over the moves since the last report (and
        ``moves``: how many)."""
        complete = list(self._samples)
        self._samples.clear()
        if not complete:
            return {}
        medians = {p: statistics.median(s[i] for s in complete) for i, p in enumerate(PHASES)}
        return {**medians, "moves": float(len(complete))}

"""Where a move's round trip goes inside the hub, for ``bench_load.py --phases``.

Run inside the hub process by ``hub_probe.py`` when ``BENCH_PHASES`` is set. It wraps a few
functions of the server (never in production: this module is only imported by the probe) and
records, for each move frame, microseconds from the frame reaching ``_on_frame`` to:

* ``queued``: the move handed to the move writer (``MoveWriter.submit``): parsing, the hub, the
  rules engine's check of the move;
* ``sent``: the batch holding it handed to the database driver (``PgDirect``);
* ``committed``: the database answered the commit;
* ``released``: the driver told of the commit (``HubDriver._move_written``);
* ``written``: the hub released the move and every recipient's frames are in the kernel (the
  driver flushes the outboxes before it returns).

Moves are told apart by their game (a game has one move in flight), so any number of games may
play; the medians are reported with each measurement window, with the count of moves.

Each window's report also lists every complete move's marks as absolute ``time.perf_counter()``
readings (``raw``: game, ply, the ``data_received`` call that brought the frame, the frame and
the phases). On Linux that clock is the system-wide ``CLOCK_MONOTONIC``, so ``bench_load.py``
joins them with its clients' own send and receive times: the part of a round trip spent
outside the hub (the kernel, and a loop — the hub's or the clients' — busy with something else)
is split into the way in and the way out.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

try:  # the speed extra; hub_probe.py imports this module whether or not it is installed
    from orjson import loads
except ImportError:  # pragma: no cover
    from json import loads  # type: ignore[assignment]

from server.store import pg_direct, writer
from server.transport import driver, server

PHASES = ("queued", "sent", "committed", "released", "written")
RAW = ("received", "frame", *PHASES)
"""The absolute marks of ``raw`` samples (after the game and the ply)."""


class MovePhases:
    """See the module docstring. :meth:`install` once, :meth:`report` per window."""

    def __init__(self) -> None:
        self._marks: dict[str, dict[str, float]] = {}
        """By game: the marks of its move in flight."""
        self._samples: list[tuple[str, int, tuple[float, ...]]] = []
        self._received = 0.0
        """When the running ``data_received`` call began."""

    def install(self) -> None:
        marks = self._marks
        samples = self._samples
        on_frame = server.ClientConnection._on_frame
        data_received = server.JitteredConnection.data_received

        def timed_data_received(conn: Any, data: bytes) -> None:
            self._received = time.perf_counter()
            data_received(conn, data)

        def timed_on_frame(conn: Any, data: str | bytes) -> Any:
            now = time.perf_counter()
            if isinstance(data, str) and '"move"' in data:
                try:
                    fields = loads(data)["d"]
                    game, ply = fields["game"], int(fields["ply"])
                except Exception:
                    pass
                else:
                    marks[game] = {"received": self._received, "frame": now, "ply": ply}
            return on_frame(conn, data)

        submit = writer.MoveWriter.submit

        def timed_submit(self: Any, game_id: str, move: Any, written: Any) -> None:
            mark = marks.get(game_id)
            if mark is not None:
                mark["queued"] = time.perf_counter()
            submit(self, game_id, move, written)

        append = pg_direct.PgDirect.append_moves

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
                    ply = int(mark["ply"])
                    samples.append((effect.record.game_id, ply, tuple(mark[p] for p in RAW)))

        server.JitteredConnection.data_received = timed_data_received  # type: ignore[method-assign,assignment]
        server.ClientConnection._on_frame = timed_on_frame  # type: ignore[method-assign,assignment]
        writer.MoveWriter.submit = timed_submit  # type: ignore[method-assign]
        pg_direct.PgDirect.append_moves = timed_append  # type: ignore[method-assign]
        driver.HubDriver._move_written = timed_move_written  # type: ignore[method-assign]

    def report(self) -> dict[str, Any]:
        """Median µs from the frame to each phase over the moves since the last report,
        ``moves`` (how many) and ``raw`` (every move's absolute marks, :data:`RAW`)."""
        complete = list(self._samples)
        self._samples.clear()
        if not complete:
            return {}
        frame = RAW.index("frame")
        medians = {
            p: statistics.median(1e6 * (marks[i] - marks[frame]) for _, _, marks in complete)
            for i, p in enumerate(RAW)
            if p in PHASES
        }
        raw = [[game, ply, *marks] for game, ply, marks in complete]
        return {**medians, "moves": float(len(complete)), "raw": raw}

"""Where a move's round trip goes inside the hub, for ``bench_load.py --phases`` (1 game).

Run inside the hub process by ``hub_probe.py`` when ``BENCH_PHASES`` is set. It wraps a few
functions of the server (never in production: this module is only imported by the probe) and
records, for each move frame, microseconds from the frame reaching ``_on_frame`` to:

* ``queued``: the move handed to the move writer (``MoveWriter.submit``): parsing, the hub, the
  rules engine's check of the move;
* ``sent``: the batch holding it handed to the database driver (``PgMoveAppender``);
* ``committed``: the database answered the commit;
* ``released``: the hub told of the commit (``Hub.persisted``);
* ``writing``: the outboxes start writing (the ack is the mover's first frame);
* ``written``: every recipient's frames are in the kernel.

Only meaningful with one game in play (the phases of concurrent moves would interleave); the
medians are reported with each measurement window.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

from server.hub import hub as hub_module
from server.store import pg_moves, writer
from server.transport import outbox, server

PHASES = ("queued", "sent", "committed", "released", "writing", "written")


class MovePhases:
    """See the module docstring. :meth:`install` once, :meth:`report` per window."""

    def __init__(self) -> None:
        self._marks: dict[str, float] = {}
        self._samples: list[tuple[float, ...]] = []

    def install(self) -> None:
        marks = self._marks
        on_frame = server.ClientConnection._on_frame

        def timed_on_frame(conn: Any, data: str | bytes) -> Any:
            marks.clear()
            marks["frame"] = time.perf_counter()
            return on_frame(conn, data)

        submit = writer.MoveWriter.submit

        def timed_submit(self: Any, game_id: str, move: Any, written: Any) -> None:
            marks["queued"] = time.perf_counter()
            submit(self, game_id, move, written)

        append = pg_moves.PgMoveAppender.append_moves

        async def timed_append(self: Any, moves: Sequence[Any]) -> None:
            marks["sent"] = time.perf_counter()
            await append(self, moves)
            marks["committed"] = time.perf_counter()

        persisted = hub_module.Hub.persisted

        def timed_persisted(self: Any, token: int, now_ms: int) -> Any:
            marks["released"] = time.perf_counter()
            return persisted(self, token, now_ms)

        flush = outbox.Flusher.flush
        samples = self._samples

        def timed_flush(self: Any) -> None:
            if "released" in marks and "writing" not in marks:
                marks["writing"] = time.perf_counter()
            flush(self)
            if "writing" in marks and "written" not in marks and "frame" in marks:
                marks["written"] = time.perf_counter()
                start = marks["frame"]
                samples.append(tuple(1e6 * (marks[p] - start) for p in PHASES if p in marks))

        server.ClientConnection._on_frame = timed_on_frame  # type: ignore[method-assign,assignment]
        writer.MoveWriter.submit = timed_submit  # type: ignore[method-assign]
        pg_moves.PgMoveAppender.append_moves = timed_append  # type: ignore[method-assign]
        hub_module.Hub.persisted = timed_persisted  # type: ignore[method-assign]
        outbox.Flusher.flush = timed_flush  # type: ignore[method-assign]

    def report(self) -> dict[str, float]:
        """Median µs from the frame to each phase over the moves since the last report."""
        complete = [s for s in self._samples if len(s) == len(PHASES)]
        self._samples.clear()
        if not complete:
            return {}
        return {p: statistics.median(s[i] for s in complete) for i, p in enumerate(PHASES)}

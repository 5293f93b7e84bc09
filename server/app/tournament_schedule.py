"""The server's own calendar of tournaments (``[tournaments] tournament_schedule``,
:mod:`server.hub.tournament.schedule`): the next slot of every recurring tournament always
exists, created by the server (``created_by`` None).

:meth:`TournamentScheduler.run_once` creates each recurring tournament's next slot unless a
tournament of that name and start is already stored; the scheduler runs it at start and then
at each next slot (at least every minute). In a cluster one hub creates a slot: the one that
takes the slot's lease (``schedule:<name>:<start>``, held for the period).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from server.app.tournaments import TournamentDirector
from server.hub.tournament.schedule import Recurring, next_slot
from server.store import Store

__all__ = ["TournamentScheduler"]

logger = logging.getLogger(__name__)

CHECK_S = 60.0
"""The longest wait between two looks at the calendar."""


class TournamentScheduler:
    """See the module docstring."""

    def __init__(
        self,
        director: TournamentDirector,
        store: Store,
        calendar: Sequence[Recurring],
        *,
        clock_ms: Callable[[], int],
        claim: Callable[[str, int], Awaitable[bool]] | None = None,
    ) -> None:
        """``claim(key, ttl_ms)``: in a cluster, whether this hub creates the slot ``key``."""
        self._director = director
        self._store = store
        self._calendar = tuple(calendar)
        self._clock = clock_ms
        self._claim = claim
        self._task: asyncio.Task[None] | None = None

    async def run_once(self) -> list[str]:
        """Create the missing next slots; the ids created."""
        if not self._calendar:
            return []
        now = self._clock()
        stored = await self._store.list_tournaments("created", limit=500)
        existing = {
            (info.settings.name, info.settings.start_at_ms)
            for info in stored
            if info.created_by is None
        }
        created: list[str] = []
        for recurring in self._calendar:
            slot = next_slot(recurring.every_ms, now)
            if (recurring.name, slot) in existing:
                continue
            key = f"schedule:{recurring.name}:{slot}"
            if self._claim is not None and not await self._claim(key, recurring.every_ms):
                continue
            created.append(await self._director.create(None, recurring.settings_at(slot)))
        return created

    def _wait_s(self) -> float:
        now = self._clock()
        soonest = min(
            (next_slot(r.every_ms, now) - now for r in self._calendar), default=CHECK_S * 1000
        )
        return min(CHECK_S, max(1.0, soonest / 1000))

    async def start(self) -> None:
        """Bring the calendar up to date now, then keep it so."""
        if self._calendar:
            await self._run()
            self._task = asyncio.get_running_loop().create_task(self._forever(), name="schedule")

    async def _run(self) -> None:
        try:
            await self.run_once()
        except Exception:
            logger.exception("the tournament calendar could not be brought up to date")

    async def _forever(self) -> None:
        while True:
            await asyncio.sleep(self._wait_s())
            await self._run()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(self._task, 5)
            self._task = None

"""The server's recurring tournaments (``[tournaments] tournament_schedule``,
:mod:`server.hub.tournament.schedule`): each entry's next occurrence is always in the calendar.

:class:`TournamentCalendar` looks at the schedule at start and every ``check_s`` seconds: every
occurrence :func:`~server.hub.tournament.schedule.upcoming` names (the next one of each entry,
and any starting before the next look) is created through the director, created_by NULL, under
the id :func:`~server.hub.tournament.schedule.occurrence_id` derives from the entry's name and
the start time. Every hub derives the same id, and the store inserts an id once: hubs sharing a
database create each occurrence once, whichever looks first (it then runs it). An entry taken
out of the schedule gets no new occurrence (one already created still takes place).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from server.app.tournaments import TournamentDirector
from server.hub.tournament.schedule import (
    ScheduleEntry,
    occurrence_id,
    occurrence_settings,
    upcoming,
)

__all__ = ["TournamentCalendar"]

logger = logging.getLogger(__name__)


class TournamentCalendar:
    """See the module docstring. :meth:`start` after the director's, :meth:`stop` before it."""

    def __init__(
        self,
        director: TournamentDirector,
        entries: tuple[ScheduleEntry, ...],
        *,
        clock_ms: Callable[[], int],
        max_players: int,
        check_s: float = 60.0,
    ) -> None:
        self._director = director
        self.entries = entries
        self._clock = clock_ms
        self._max_players = max_players
        self._check_s = check_s
        self._task: asyncio.Task[None] | None = None

    async def fill(self) -> list[str]:
        """Create the occurrences due in the calendar now (see the module docstring); the ids
        of those this call created."""
        created = []
        now = self._clock()
        # Twice the period of the looks: the next occurrence is created before the one before
        # it starts, even when a look comes late.
        for entry, start in upcoming(self.entries, now, 2 * round(self._check_s * 1000)):
            tournament_id = occurrence_id(entry, start)
            settings = occurrence_settings(entry, start, self._max_players)
            try:
                if await self._director.create_scheduled(tournament_id, settings):
                    created.append(tournament_id)
            except Exception:
                logger.exception("scheduled tournament %s at %d not created", entry.name, start)
        return created

    async def start(self) -> None:
        """Fill the calendar now, then every ``check_s`` seconds (nothing to do: no schedule)."""
        if not self.entries:
            return
        await self.fill()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="tournament-calendar")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._check_s)
            await self.fill()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

"""Which nodes of the cluster are live: looked up every third of the presence TTL by the node,
and on demand when a node not live at the last look is asked about (it may have just started).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from server.bus import Presence

__all__ = ["Liveness"]

LIVE_RECHECK_S = 0.25


class Liveness:
    """The nodes live at the last look.

    :param on_look: told of the live nodes after each look, with those live before.
    """

    def __init__(
        self,
        presence: Presence,
        node_id: str,
        on_look: Callable[[set[str], set[str]], None],
    ) -> None:
        self._presence = presence
        self._node_id = node_id
        self._on_look = on_look
        self.live: set[str] = {node_id}
        self._checked = 0.0
        self._refresh: asyncio.Future[None] | None = None

    def is_live(self, node_id: str) -> bool:
        """Whether ``node_id`` was live at the last look (a new node may not be known yet)."""
        return node_id == self._node_id or node_id in self.live

    async def alive(self, node_id: str) -> bool:
        """Whether ``node_id`` is live, looking again if it was not at the last look.

        :raises BusError: Redis is unreachable.
        """
        if self.is_live(node_id):
            return True
        if self._refresh is None:
            # Looks are at most every LIVE_RECHECK_S; a node that started after the last look is
            # not in it yet, so wait for the next look rather than call it dead.
            delay = LIVE_RECHECK_S - (time.monotonic() - self._checked)
            self._refresh = asyncio.ensure_future(self._look_after(delay))
            self._refresh.add_done_callback(self._refreshed)
        if self._refresh is not None:  # wait for the look in progress, whoever started it
            await asyncio.shield(self._refresh)
        return self.is_live(node_id)

    def _refreshed(self, refresh: asyncio.Future[None]) -> None:
        self._refresh = None
        if not refresh.cancelled():
            refresh.exception()  # retrieved: the waiters got it

    async def _look_after(self, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        await self.look()

    async def look(self) -> None:
        """Look the live nodes up now.

        :raises BusError: Redis is unreachable.
        """
        self._checked = time.monotonic()
        live = await self._presence.live_nodes()
        live.add(self._node_id)
        before, self.live = self.live, live
        self._on_look(before, live)

"""One owner per tournament in a cluster (docs/tournaments.md, "Several hubs").

The games' way (``server.cluster.ownership``), kept as simple as a tournament allows: a
tournament is *run* — its timers, pairings, start and end — by the hub holding its lease
(``GameLeases`` under the key ``tournament:<id>``), renewed every ``lease_ttl_ms / 3``; a lease
found held by another hub means this one lost the tournament (its timer stops). A sweep every
renewal period takes over the unfinished tournaments whose lease has been free for two sweeps
in a row (a live owner whose renewal came late takes it back first) and resumes them from the
store (:meth:`~server.app.tournament_live.TournamentRunner.resume`: games created, results
folded in, timers rebuilt).

Any hub may store a door's change or a game's result: the appends are optimistic
(``expected_seq``), so two hubs never store conflicting events; the one whose append came
second reloads and decides again. After each append a hub publishes ``{"id", "seq"}`` on the bus
channel :data:`CHANNEL`; the others reload a copy that is behind, push it to their watchers,
and the owner advances it (a result reported on the hub that ran the game reaches the owner so).
A line of a tournament's chat stored here is published on the same channel as ``{"id", "node",
"line", "chat"}`` (this hub's node, the line's id, the line); the other hubs push it to their
watchers (``server.app.tournament_chat``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random

from server.app.tournament_chat import TournamentChats
from server.app.tournament_live import TournamentRunner
from server.bus import Bus, BusError, GameLeases
from server.hub.tournament_payloads import TournamentChatLineView
from server.store import Store, StoreError
from server.store.tournaments import each_unfinished_id

__all__ = ["CHANNEL", "TournamentLeases", "lease_key"]

logger = logging.getLogger(__name__)

CHANNEL = "tournaments"
"""The bus channel of the tournaments' changes (every hub subscribes)."""


def lease_key(tournament_id: str) -> str:
    """The lease of a tournament (apart from the games' leases, which are keyed by game id)."""
    return f"tournament:{tournament_id}"


class TournamentLeases:
    """The tournaments this hub runs in a cluster (see the module docstring); wired to the
    runner's ``owns``, ``claim`` and ``changed``."""

    def __init__(
        self,
        runner: TournamentRunner,
        leases: GameLeases,
        bus: Bus,
        store: Store,
        *,
        node_id: str,
        ttl_ms: int,
    ) -> None:
        self._runner = runner
        self._leases = leases
        self._bus = bus
        self._store = store
        self._node = node_id
        self.ttl_ms = ttl_ms
        self.owned: set[str] = set()
        self._free_before: set[str] = set()
        self._loops: list[asyncio.Task[None]] = []
        self._sends: set[asyncio.Task[None]] = set()
        runner.owns = self.owned.__contains__
        runner.claim = self.claim
        runner.changed = self.changed
        self.chats: TournamentChats | None = None
        """The director's chats, told the lines the other hubs stored (set once built; their
        ``publish`` is :meth:`chat_line`)."""

    async def claim(self, tournament_id: str) -> bool:
        """Take the tournament's lease if it is free (or already ours)."""
        try:
            taken = await self._leases.acquire(lease_key(tournament_id), self._node, self.ttl_ms)
        except BusError as error:
            logger.info("tournament %s: lease not taken (%s)", tournament_id, error)
            return False
        if taken:
            self.owned.add(tournament_id)
        return taken

    async def start(self) -> None:
        """Subscribe to the tournaments' changes and start renewing and sweeping (before the
        runner's start, which claims the tournaments it finds free)."""
        await self._bus.subscribe(CHANNEL, self._on_message)
        self._loops = [
            asyncio.create_task(self._renew_forever(), name="tournament-leases"),
            asyncio.create_task(self._sweep_forever(), name="tournament-sweep"),
        ]

    async def stop(self) -> None:
        """Stop the loops and give the leases up (another hub takes the tournaments over)."""
        for task in self._loops:
            task.cancel()
        if self._loops:  # bounded: a cancellation lost in a Redis call must not hold the stop
            await asyncio.wait(self._loops, timeout=5)
        self._loops = []
        if self._sends:
            await asyncio.wait(set(self._sends), timeout=2)
        with contextlib.suppress(BusError):
            await self._leases.release_many(sorted(lease_key(t) for t in self.owned), self._node)
            await self._bus.unsubscribe(CHANNEL)
        self.owned.clear()

    # --- changes ------------------------------------------------------------------------------

    def changed(self, tournament_id: str, seq: int) -> None:
        """Tell the other hubs (a lost notice only delays their copies: the next one, or the
        owner's sweep, brings them up to date)."""
        self._publish(json.dumps({"id": tournament_id, "seq": seq}).encode())

    def chat_line(self, tournament_id: str, line_id: int, line: TournamentChatLineView) -> None:
        """Tell the other hubs of a chat line stored here (a lost one is missed by their
        watchers, and shown from the store to the next watch there)."""
        notice = {"id": tournament_id, "node": self._node, "line": line_id, "chat": line}
        self._publish(json.dumps(notice).encode())

    def _publish(self, message: bytes) -> None:
        task = asyncio.get_running_loop().create_task(self._send(message))
        self._sends.add(task)
        task.add_done_callback(self._sends.discard)

    async def _send(self, message: bytes) -> None:
        try:
            await self._bus.publish(CHANNEL, message)
        except BusError as error:
            logger.info("tournament change not published (%s)", error)

    async def _on_message(self, channel: str, data: bytes) -> None:
        try:
            notice = json.loads(data)
            if "chat" in notice:
                self._on_chat(notice)
                return
            tournament_id, seq = notice["id"], notice["seq"]
            if not isinstance(tournament_id, str) or not isinstance(seq, int):
                raise ValueError(notice)
        except (ValueError, KeyError, TypeError):
            logger.warning("bad tournament notice %r", data[:200])
            return
        await self._runner.on_notice(tournament_id, seq)

    def _on_chat(self, notice: dict[str, object]) -> None:
        """A chat line stored by a hub: pushed to the watchers here (not by the hub itself)."""
        tournament_id, line_id, line = notice["id"], notice["line"], notice["chat"]
        if not (
            isinstance(tournament_id, str)
            and isinstance(line_id, int)
            and isinstance(line, dict)
            and isinstance(line.get("user"), str)
            and isinstance(line.get("text"), str)
            and isinstance(line.get("at"), int)
        ):
            raise ValueError(notice)
        if notice["node"] == self._node or self.chats is None:
            return
        view: TournamentChatLineView = {
            "user": line["user"],
            "text": line["text"],
            "at": line["at"],
        }
        self.chats.heard(tournament_id, line_id, view)

    # --- leases -------------------------------------------------------------------------------

    async def _renew_forever(self) -> None:
        period = self.ttl_ms / 3000
        while True:
            await asyncio.sleep(period)
            try:
                await self.renew()
            except BusError as error:
                logger.info("tournament leases: cluster unavailable (%s)", error)

    async def renew(self) -> None:
        """Renew the leases held; a tournament whose lease another hub holds is dropped."""
        keys = {lease_key(t): t for t in self.owned}
        lost = await self._leases.hold_many(sorted(keys), self._node, self.ttl_ms)
        for key in lost:
            tournament_id = keys[key]
            logger.warning("tournament %s is run by another hub now", tournament_id)
            self.owned.discard(tournament_id)
            self._runner.drop(tournament_id)

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.ttl_ms / 3000 * random.uniform(0.5, 1.0))
            try:
                await self.sweep()
            except (BusError, StoreError) as error:
                logger.info("tournament sweep: %s", error)

    async def sweep(self) -> None:
        """Take over the unfinished tournaments whose lease was free at this sweep and the one
        before (their owner died or stopped)."""
        free: set[str] = set()
        async for tournament_id in each_unfinished_id(self._store):
            if tournament_id in self.owned:
                continue
            if await self._leases.owner(lease_key(tournament_id)) is None:
                free.add(tournament_id)
        ready, self._free_before = free & self._free_before, free - self._free_before
        for tournament_id in sorted(ready):
            if await self.claim(tournament_id):
                logger.info("taking over tournament %s", tournament_id)
                await self._runner.resume(tournament_id)

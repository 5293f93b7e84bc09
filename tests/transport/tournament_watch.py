"""A tournament's standings pushes, awaited in a test (the director's ``watch``): how a test
knows a result was folded in, without polling."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from server.app import App

TIMEOUT = 15.0


class WallClock:
    """The tournaments' wall clock in a test: epoch ms that move only when told (the app's
    ``tournament_clock``)."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms


class Standings:
    """Every ``tournament_standings`` of one page of a tournament (page 1 unless told) from
    now on: :meth:`start`."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    @classmethod
    async def start(cls, app: App, tournament_id: str, page: int = 1) -> Standings:
        standings = cls()
        await app.tournaments.watch(tournament_id, standings._told, page=page)
        return standings

    def _told(self, frame: bytes) -> None:
        message = json.loads(frame)
        assert message["t"] == "tournament_standings", message
        self.queue.put_nowait(message["d"])

    async def until(self, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first push from now on that passes ``test``."""
        while True:
            payload = await asyncio.wait_for(self.queue.get(), TIMEOUT)
            if test(payload):
                return payload


def games_played(payload: dict[str, Any]) -> int:
    """Games counted in a standings push (each game counts for both players)."""
    return sum(int(row["games"]) for row in payload["standings"])

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


async def with_history(
    view: dict[str, Any], read_round: Callable[[int, int], Any]
) -> dict[str, Any]:
    """``view`` with the ``pairings`` and ``byes`` of every round, in pairing order, read page by
    page with ``read_round(round, page)`` (``tournament_round``, or the director's
    ``round_pairings``): the view itself carries the current round's only."""
    pairings: list[Any] = []
    byes: list[Any] = []
    for round_ in range(1, view["round"] + 1):
        page, pages = 1, 1
        while page <= pages:
            shown = await read_round(round_, page)
            pairings += shown["pairings"]
            byes += shown["byes"]
            pages, page = shown["pages"], page + 1
    return {**view, "pairings": pairings, "byes": byes}


async def app_history(app: App, tournament_id: str) -> dict[str, Any]:
    """The director's view with every round's pairings and byes (:func:`with_history`)."""
    view = await app.tournaments.view(tournament_id)
    return await with_history(
        dict(view), lambda r, p: app.tournaments.round_pairings(tournament_id, r, p)
    )


async def ws_history(client: Any, tournament_id: str, kind: str = "tournament") -> dict[str, Any]:
    """The websocket's view (``kind``: ``tournament`` or ``tournament_watch``) with every
    round's pairings and byes (:func:`with_history`)."""
    view = await client.ok(kind, {"id": tournament_id})
    return await with_history(
        view,
        lambda r, p: client.ok("tournament_round", {"id": tournament_id, "round": r, "page": p}),
    )

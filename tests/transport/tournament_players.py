"""Websocket players of a tournament for the tests: each plays its tournament games to the
result a policy gives (the loser resigns, both offer a draw), nothing else."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

from ws_support import Client, Msg

Outcome = Literal["white", "black", "draw"]
Policy = Callable[[str, str], Outcome]
"""Who wins a game between the players named (white, black): ``white``, ``black`` or ``draw``."""

WILD_FISCHER = {"kind": "fischer", "base_s": 60, "inc_s": 0}


class TournamentClock:
    """The tournaments' wall clock in the tests: epoch ms that move only when told."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms


class Seat:
    """One player's client: plays every tournament game it is given by ``policy`` until
    stopped; counts the games played."""

    def __init__(self, client: Client, policy: Policy, max_games: int | None = None) -> None:
        self.client = client
        self.policy = policy
        self.max_games = max_games
        """After this many games the seat stops playing (its next game stays unfinished)."""
        self.games: list[str] = []
        self.ended: list[Msg] = []
        self.task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        assert self.client.player is not None
        return str(self.client.player["name"])

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    async def _run(self) -> None:
        client = self.client
        while True:
            start = await client.next(
                lambda m: m["t"] == "game_start" and "tournament" in m["d"], timeout=3600
            )
            game: str = start["d"]["game"]
            self.games.append(game)
            if self.max_games is not None and len(self.games) > self.max_games:
                continue
            me, opponent = self.name, start["d"]["opponent"]["name"]
            white, black = (me, opponent) if start["d"]["side"] == "first" else (opponent, me)
            outcome = self.policy(white, black)
            mine = "white" if white == me else "black"
            if outcome == "draw":
                await client.send("draw_offer", {"game": game})
            elif outcome != mine:
                await client.send("resign", {"game": game})
            end = await client.next(lambda m, g=game: m["t"] == "end" and m["d"]["game"] == g)
            self.ended.append(end)


async def registered(open_client: Any, app: Any, names: list[str]) -> list[Client]:
    clients = []
    for name in names:
        client = await open_client(app, name)
        answer = await client.register(name)
        assert answer["t"] == "welcome", answer
        clients.append(client)
    return clients


def tournament_frames(client: Client, tournament_id: str) -> Callable[[Msg], bool]:
    def test(message: Msg) -> bool:
        return message["t"] == "tournament_standings" and message["d"]["id"] == tournament_id

    return test

"""Helpers of the tests with the computer: a human who plays random legal moves against it (the
worker processes: ``tests/worker_support.py``)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from worker_support import WorkerProcess
from ws_support import Client, Msg

__all__ = [
    "TURN_TIMEOUT_S",
    "HumanGame",
    "WorkerProcess",
    "challenge_the_computer",
    "play_the_computer",
]

TURN_TIMEOUT_S = 60.0
"""Longest wait for the computer's move (a lease running out and a second worker included)."""


@dataclass
class HumanGame:
    """The human's view of a game vs the computer, kept from the room's messages."""

    client: Client
    game_id: str
    side: str = ""
    moves: list[str] = field(default_factory=list)
    legal: list[str] = field(default_factory=list)
    turn: str | None = None
    end: Msg | None = None
    computer_moves: int = 0

    def read(self, message: Msg) -> None:
        data = message.get("d") or {}
        if data.get("game") != self.game_id:
            return
        if message["t"] == "game":
            self.side = data["role"]
            self.moves = list(data["moves"])
            self.legal = list(data["legal"])
            self.turn = data["turn"]
        elif message["t"] == "move":
            assert data["ply"] == len(self.moves) + 1, message
            self.moves.append(data["uci"])
            if data["side"] != self.side:
                assert data["uci"] in self.legal, ("the computer played an illegal move", message)
                self.computer_moves += 1
            self.legal = list(data["legal"])
            self.turn = data["turn"]
        elif message["t"] == "end":
            self.end = data

    async def next_event(self) -> None:
        message = await self.client.next(
            lambda m: m["t"] in ("game", "move", "end") or m["t"] == "error",
            timeout=TURN_TIMEOUT_S,
        )
        assert message["t"] != "error", message
        self.read(message)


async def challenge_the_computer(
    client: Client, variant: str, level: int, colour: str, base_s: int, inc_s: int
) -> HumanGame:
    """Start a game vs the computer on a Fischer clock; the human's view of it."""
    tc = {"kind": "fischer", "base_s": base_s, "inc_s": inc_s}
    answer = await client.ok(
        "challenge_ai", {"variant": variant, "level": level, "colour": colour, "tc": tc}
    )
    return HumanGame(client, answer["game"])


async def play_the_computer(
    client: Client,
    variant: str,
    *,
    level: int = 1,
    colour: str = "first",
    tc: dict[str, Any] | None = None,
    seed: int = 1,
    resign_after: int | None = None,
) -> HumanGame:
    """Start a game vs the computer and play random legal moves (seeded) until it ends, or
    resign after ``resign_after`` plies. Returns the game with its ``end``."""
    rng = random.Random(seed)
    answer = await client.ok(
        "challenge_ai",
        {
            "variant": variant,
            "level": level,
            "colour": colour,
            "tc": tc or {"kind": "fischer", "base_s": 300, "inc_s": 2},
        },
    )
    game = HumanGame(client, answer["game"])
    start = await client.next("game_start", timeout=TURN_TIMEOUT_S)
    assert (
        start["d"]["opponent"]["computer"] is True and start["d"]["opponent"]["name"] == "Computer"
    )
    while game.end is None:
        await game.next_event()
        if game.end is None and game.turn == game.side and game.legal:
            if resign_after is not None and len(game.moves) >= resign_after:
                await client.ok("resign", {"game": game.game_id})
                continue
            ply = len(game.moves) + 1
            await client.send(
                "move",
                {"game": game.game_id, "ply": ply, "move": rng.choice(sorted(game.legal))},
                ack=f"h{ply}",
            )
    return game

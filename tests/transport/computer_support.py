"""Helpers of the tests with the computer: real worker processes (``python -m server.worker``,
the real engines) against a live server, and a human who plays random legal moves."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ws_support import TEST_WORKER_KEY, Client, Msg

ROOT = Path(__file__).resolve().parents[2]
TURN_TIMEOUT_S = 60.0
"""Longest wait for the computer's move (a lease running out and a second worker included)."""


@dataclass
class WorkerProcess:
    process: asyncio.subprocess.Process
    log: Path

    @classmethod
    async def start(cls, port: int, log: Path, name: str, *extra: str) -> WorkerProcess:
        handle = log.open("ab")
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "server.worker",
                "--url",
                f"http://127.0.0.1:{port}",
                "--key",
                TEST_WORKER_KEY,
                "--slots",
                "1",
                "--name",
                name,
                *extra,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdout=handle,
                stderr=handle,
                start_new_session=True,
            )
        finally:
            handle.close()
        return cls(process, log)

    async def stop(self) -> None:
        """SIGTERM (the worker gives its job back), SIGKILL to the group if it lingers."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 15)
            except TimeoutError:
                self.kill()
                await self.process.wait()
        self.kill()  # the engines it started, if any are left

    def kill(self) -> None:
        """SIGKILL the worker and everything in its process group (its engines)."""
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


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

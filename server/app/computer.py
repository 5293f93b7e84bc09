"""The computer as a player: its seat in the hub, fed by the engine workers (docs/engines.md).

:class:`ComputerSeat` is one hub connection of the player "Computer" (``PlayerInfo.computer``),
the same pattern as the ICS door: :meth:`HubDriver.connect` with a :class:`FrameSink` that reads
the hub's messages instead of writing them to a socket. It never runs an engine: when it is the
computer's turn in one of its games it queues a **move job** (:class:`~server.app.jobs.JobQueue`:
the start position, the moves, the level, both clocks), and when a worker submits the job's move
it plays it with the hub's :class:`MoveCommand`, like any player — its clock ran meanwhile, the
hub charges it like a human's.

**Our adjudicator is the authority.** The submitted move must be one of the ``legal`` moves the
hub sent for that position (the rules engine's list); the hub checks it again. A move that is
not (``illegal_move``), or none at all (``no_move``: the engine had none or the worker gave up),
is never played: the **fallback** is played instead — the first of the legal moves in sorted
order (deterministic, so a test can name it). Every fallback is logged and counted per variant
and reason (:attr:`ComputerSeat.fallbacks`).

A game vs the computer starts with the hub command ``challenge_ai`` (the hub tells this seat the
game and its level in ``computer_game``). After a restart the hub restores the unfinished games
with the computer in them; the seat, connected before that, gets their snapshots and takes the
level from the game's latest job.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from server.app.jobs import JobQueue
from server.hub.commands import MoveCommand
from server.hub.errors import ErrorCode
from server.hub.identity import COMPUTER
from server.store import StoreUnavailableError
from server.store.jobs import Job
from server.transport.driver import HubDriver

__all__ = ["COMPUTER", "DEFAULT_LEVEL", "ComputerSeat", "fallback_move"]

logger = logging.getLogger(__name__)

DEFAULT_LEVEL = 4
"""The level of a game whose level was lost (restored without any job stored)."""
RETRY_S = 1.0
"""Wait before asking again after the database refused a job or the room was busy."""
POLL_S = 0.5
"""Several hubs: how often the seat looks in the database for its jobs' answers that reached
another hub's ``/fishnet`` endpoint."""


def fallback_move(legal: list[str]) -> str | None:
    """The move played when the engine's is missing or illegal: the first legal move in sorted
    order (None when there is none)."""
    return min(legal) if legal else None


@dataclass
class _Game:
    """What the seat knows of one of its games (from the hub's messages)."""

    game_id: str
    level: int | None = None
    variant: str | None = None
    side: str | None = None
    start_fen: str | None = None
    tc: dict[str, Any] | None = None
    moves: list[str] = field(default_factory=list)
    legal: list[str] = field(default_factory=list)
    turn: str | None = None
    clocks: dict[str, Any] | None = None
    status: str | None = None
    job_id: str | None = None
    asked_ply: int | None = None
    """The ply (moves played) the current job was asked for."""

    @property
    def our_turn(self) -> bool:
        return (
            self.status == "started"
            and self.side is not None
            and self.turn == self.side
            and bool(self.legal)
            and self.variant is not None
        )


class ComputerSeat:
    """See the module docstring."""

    def __init__(self, driver: HubDriver, jobs: JobQueue, *, poll_results: bool = False) -> None:
        """``poll_results``: several hubs share the queue, so a worker may submit a move to
        another hub; the seat then also finds its jobs' answers in the database."""
        self.driver = driver
        self.jobs = jobs
        self._poll_results = poll_results
        self.conn_id = 0
        self.games: dict[str, _Game] = {}
        self.fallbacks: Counter[tuple[str, str]] = Counter()
        """(variant, reason) → how many moves the computer played by its fallback."""
        self.played: Counter[str] = Counter()
        """variant → moves played by the computer."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        jobs.on_move(self._on_result)

    # -- the hub connection (a Peer whose outbox reads the frames) ------------------------

    @property
    def outbox(self) -> ComputerSeat:
        return self

    def close_soon(self, code: int, reason: str) -> None:
        logger.warning("the hub closed the computer's connection (%s %s)", code, reason)

    def close(self) -> None:
        """FrameSink.close: nothing to release."""

    def connect(self) -> None:
        self.conn_id = self.driver.new_conn_id()
        self.driver.internal.add(self.conn_id)
        self.driver.connect(self.conn_id, self, COMPUTER)
        if self._poll_results:
            self._spawn(self._poll())

    async def stop(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.driver.disconnect(self.conn_id)

    def put(self, frame: bytes) -> None:
        """A message of the hub to the computer."""
        try:
            message = json.loads(frame)
            self._read(message.get("t"), message.get("d") or {})
        except Exception:
            logger.exception("the computer could not read %r", frame[:200])

    # -- reading the hub's messages -------------------------------------------------------

    def _read(self, kind: str | None, data: dict[str, Any]) -> None:
        if kind == "error":
            self._refused(data)
            return
        game_id = data.get("game")
        if not isinstance(game_id, str):
            return
        if kind == "computer_game":
            self._game(game_id).level = int(data["level"])
            return
        game = self.games.get(game_id)
        if kind == "game_start":
            self._game(game_id).side = data.get("side")
            return  # its snapshot follows
        if kind == "game":
            game = self._game(game_id)
            game.variant = data["variant"]
            game.tc = data.get("tc")
            game.status = data["status"]
            game.side = data.get("role") if data.get("role") in ("first", "second") else game.side
            game.start_fen = data["start_fen"]
            game.moves = list(data["moves"])
            game.legal = list(data.get("legal") or [])
            game.turn = data.get("turn")
            game.clocks = data.get("clocks")
            if game.status != "started":
                self._forget(game)
                return
        elif game is None:
            return
        elif kind == "move":
            ply = data["ply"]
            if ply == len(game.moves) + 1:
                game.moves.append(data["uci"])
            elif ply != len(game.moves):
                game.moves = [*game.moves[: ply - 1], data["uci"]]
            game.legal = list(data.get("legal") or [])
            game.turn = data.get("turn")
            game.clocks = data.get("clocks")
        elif kind == "takeback":
            self._resync(game)
            return
        elif kind == "end":
            self._forget(game)
            return
        else:
            return
        self._maybe_ask(game)

    def _game(self, game_id: str) -> _Game:
        game = self.games.get(game_id)
        if game is None:
            game = self.games[game_id] = _Game(game_id)
        return game

    def _forget(self, game: _Game) -> None:
        self.games.pop(game.game_id, None)
        if game.job_id is not None:
            self._spawn(self._cancel(game.job_id))

    def _resync(self, game: _Game) -> None:
        """The position changed in a way the seat does not follow move by move: ask the room
        for a snapshot (a ``join`` answers with one)."""
        from server.hub.commands import JoinCommand

        self.driver.handle(self.conn_id, JoinCommand(game.game_id))

    def _refused(self, data: dict[str, Any]) -> None:
        logger.warning("the hub refused the computer's command: %s", data)
        if data.get("code") != ErrorCode.BUSY:
            return
        # a room was writing something when the move came: each game still waiting for its
        # move (its job answered) gets its position again shortly, and a new job
        for game in self.games.values():
            if game.our_turn and game.job_id is None and game.asked_ply is not None:
                game.asked_ply = None
                self._spawn(self._later(lambda game=game: self._resync(game)))

    # -- jobs -----------------------------------------------------------------------------

    def _maybe_ask(self, game: _Game) -> None:
        if self._closed or not game.our_turn or game.asked_ply == len(game.moves):
            return
        game.asked_ply = len(game.moves)
        self._spawn(self._ask(game, game.asked_ply))

    async def _ask(self, game: _Game, ply: int) -> None:
        if game.level is None:
            latest = await self.jobs.store.latest_job(game.game_id, "move")
            level = latest.payload.get("level") if latest is not None else None
            game.level = level if isinstance(level, int) else DEFAULT_LEVEL
        assert game.variant is not None
        payload = {
            "position": game.start_fen,
            "moves": " ".join(game.moves[:ply]),
            "level": game.level,
            "clock": job_clock(game.tc, game.clocks, game.side),
        }
        while not self._closed and self.games.get(game.game_id) is game:
            try:
                job_id = await self.jobs.enqueue_move(game.game_id, game.variant, payload)
            except StoreUnavailableError as error:
                logger.warning("game %s: the move job could not be queued (%s)", game.game_id, error)
                await asyncio.sleep(RETRY_S)
                continue
            if game.asked_ply == ply and self.games.get(game.game_id) is game:
                game.job_id = job_id
            else:
                await self._cancel(job_id)
            return

    async def _on_result(self, job: Job, bestmove: str | None) -> None:
        game = self.games.get(job.game_id)
        if game is None or game.job_id != job.id or not game.our_turn:
            return  # the game ended, or moved on: a late answer
        game.job_id = None
        move = bestmove
        if move is None or move not in game.legal:
            reason = "no_move" if move is None else "illegal_move"
            move = fallback_move(game.legal)
            self.fallbacks[(job.variant, reason)] += 1
            logger.warning(
                "game %s (%s): the engine's move %r is refused (%s); playing %r instead",
                game.game_id,
                job.variant,
                bestmove,
                reason,
                move,
            )
        if move is None:
            return
        self.played[job.variant] += 1
        ply = len(game.moves) + 1
        self.driver.handle(self.conn_id, MoveCommand(game.game_id, ply, move, ack=f"c{ply}"))

    async def _poll(self) -> None:
        """Play the answers other hubs stored for this seat's jobs (see ``poll_results``)."""
        while not self._closed:
            await asyncio.sleep(POLL_S)
            for game in list(self.games.values()):
                if game.job_id is None:
                    continue
                try:
                    job = await self.jobs.store.job(game.job_id)
                except StoreUnavailableError:
                    break
                if job is not None and job.state == "done" and isinstance(job.result, dict):
                    await self._on_result(job, job.result.get("bestmove"))

    async def _cancel(self, job_id: str) -> None:
        # if the database is down the job ends anyway: its answer finds no game waiting
        with contextlib.suppress(StoreUnavailableError):
            await self.jobs.store.cancel(job_id)

    async def _later(self, action: Any) -> None:
        await asyncio.sleep(RETRY_S)
        if not self._closed:
            action()

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def job_clock(
    tc: dict[str, Any] | None, clocks: dict[str, Any] | None, side: str | None
) -> dict[str, Any] | None:
    """Both clocks in a move job's form (FISHNET.md) from the hub's ``tc`` and ``clocks``."""
    if not tc or not clocks or side not in ("first", "second"):
        return None
    first, second = clocks.get("first") or {}, clocks.get("second") or {}
    ours = first if side == "first" else second
    if tc.get("kind") == "byoyomi":
        return {
            "kind": "byoyomi",
            "first_ms": int(first.get("ms", 0)),
            "second_ms": int(second.get("ms", 0)),
            "increment_ms": 0,
            "byoyomi_ms": int(tc.get("period_s", 0)) * 1000,
            "periods": int(ours.get("periods", 0)),
        }
    return {
        "kind": "fischer",
        "first_ms": int(first.get("ms", 0)),
        "second_ms": int(second.get("ms", 0)),
        "increment_ms": int(tc.get("inc_s", 0)) * 1000,
        "byoyomi_ms": 0,
        "periods": 0,
    }

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

**Offers** are answered at once, as lichess's AI does (docs/engines.md): a **takeback** is
accepted (the hub takes back the player's last move, and the computer's reply if it had made
one); the move job of the position taken back is cancelled, and a worker's answer to it is never
played (a result is played only for the moves its job was asked for). A **draw** offer is
declined (lichess does not let a player offer its AI a draw; here the offer exists in the chess
family and is answered "no" at once). A **rematch** is accepted at the same level.

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
from typing import Any, cast

from server.app.jobs import JobQueue
from server.hub.commands import (
    Command,
    JoinCommand,
    MoveCommand,
    OfferAction,
    OfferCommand,
    OfferKind,
)
from server.hub.errors import ErrorCode
from server.hub.identity import COMPUTER
from server.hub.payloads import (
    ClocksView,
    ErrorPayload,
    OfferPayload,
    TakebackPayload,
    TimeControlView,
)
from server.jsontypes import JsonObject
from server.rules.time_control import CORRESPONDENCE_KINDS
from server.store import StoreUnavailableError
from server.store.jobs import Job, JobClock, MoveJobPayload
from server.transport.driver import HubDriver

__all__ = ["COMPUTER", "DEFAULT_LEVEL", "ComputerSeat", "fallback_move"]

logger = logging.getLogger(__name__)

DEFAULT_LEVEL = 4
"""The level of a game whose level was lost (restored without any job stored)."""
RETRY_S = 1.0
"""Wait before asking again after the database refused a job or the room was busy."""
BUSY_RETRY_S = 0.1
"""Wait before answering an offer again when the room was saving something."""
FINISHED_KEPT = 1000
"""How many finished games' levels the seat remembers (a rematch gets the same level)."""
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
    tc: TimeControlView | None = None
    moves: list[str] = field(default_factory=list)
    legal: list[str] = field(default_factory=list)
    turn: str | None = None
    clocks: ClocksView | None = None
    status: str | None = None
    job_id: str | None = None
    asked_ply: int | None = None
    """The ply (moves played) the current job was asked for."""
    takeback_offered: bool = False
    """The opponent's takeback offer is pending (the seat is accepting it): no move now."""
    opponent: str | None = None
    """The player id of the computer's opponent: its move jobs' owner (the job queue hands
    jobs out round-robin between owners)."""

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
        self.answered: Counter[tuple[str, str]] = Counter()
        """(offer kind, "accept" | "decline") → offers the computer answered."""
        self._finished_levels: dict[str, int] = {}
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
            if message.get("t") == "error":
                self._refused(cast(ErrorPayload, message.get("d") or {}), message.get("a"))
            else:
                self._read(message.get("t"), message.get("d") or {})
        except Exception:
            logger.exception("the computer could not read %r", frame[:200])

    # -- reading the hub's messages -------------------------------------------------------

    def _read(self, kind: str | None, data: JsonObject) -> None:
        """One hub message (``kind``, its payload ``data``): the fields of its kind are read."""
        game_id = data.get("game")
        if not isinstance(game_id, str):
            return
        if kind == "computer_game":
            self._game(game_id).level = int(data["level"])
            return
        if kind == "offer":
            self._offer(game_id, cast(OfferPayload, data))
            return
        if kind == "rematch":
            level = self._finished_levels.get(game_id)
            new_game = data.get("new_game")
            if level is not None and isinstance(new_game, str):
                self._game(new_game).level = level
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
            game.opponent = _opponent(data.get("players"), game.side)
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
            self._taken_back(game, cast(TakebackPayload, data))
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
        if game.level is not None:
            # a rematch is played at the same level (the oldest remembered go first)
            self._finished_levels[game.game_id] = game.level
            while len(self._finished_levels) > FINISHED_KEPT:
                del self._finished_levels[next(iter(self._finished_levels))]
        self._drop_job(game)

    def _drop_job(self, game: _Game) -> None:
        """The game's current job is of no use any more: cancel it, forget it."""
        if game.job_id is not None:
            self._spawn(self._cancel(game.job_id))
        game.job_id = None
        game.asked_ply = None

    def _taken_back(self, game: _Game, data: TakebackPayload) -> None:
        """A takeback was stored: the moves after ``ply`` are gone, and with them the position
        a running job was asked for."""
        ply = data["ply"]
        game.moves = game.moves[:ply]
        game.legal = list(data.get("legal") or [])
        game.turn = data.get("turn")
        game.clocks = data.get("clocks")
        game.takeback_offered = False
        self._drop_job(game)

    def _resync(self, game: _Game) -> None:
        """Ask the room for a snapshot of the game (a ``join`` answers with one)."""
        self._soon(JoinCommand(game.game_id))

    # -- offers ---------------------------------------------------------------------------

    def _offer(self, game_id: str, data: OfferPayload) -> None:
        """An offer event of one of the computer's games: answer the opponent's offers."""
        kind, action = data.get("kind"), data.get("action")
        game = self.games.get(game_id)
        if kind == "rematch":
            mine = game is None and game_id in self._finished_levels
        else:
            mine = game is not None and game.side is not None
        if not mine or (game is not None and data.get("side") == game.side):
            return
        if kind == "takeback" and game is not None:
            game.takeback_offered = action == "offer"
            if not game.takeback_offered:
                self._maybe_ask(game)
        if action != "offer" or kind not in ("draw", "takeback", "rematch"):
            return
        answer = _answer(kind)
        self.answered[(kind, answer)] += 1
        self._soon(OfferCommand(game_id, kind, answer, ack=f"o:{kind}:{game_id}"))

    def _soon(self, command: Command) -> None:
        """Send a command to the hub right after the message being read (never from inside
        the hub's delivery of its effects)."""
        loop = asyncio.get_running_loop()
        loop.call_soon(lambda: None if self._closed else self.driver.handle(self.conn_id, command))

    def _refused(self, data: ErrorPayload, ack: object = None) -> None:
        if isinstance(ack, str) and ack.startswith("o:"):
            self._offer_refused(ack, data)
            return
        logger.warning("the hub refused the computer's command: %s", data)
        if data.get("code") != ErrorCode.BUSY:
            return
        # a room was writing something when the move came: each game still waiting for its
        # move (its job answered) gets its position again shortly, and a new job
        for game in self.games.values():
            if game.our_turn and game.job_id is None and game.asked_ply is not None:
                game.asked_ply = None
                self._spawn(self._later(lambda game=game: self._resync(game)))

    def _offer_refused(self, ack: str, data: ErrorPayload) -> None:
        """An answer to an offer came too early (the room was saving a move: try again) or too
        late (the offer was withdrawn, or a move cancelled it: nothing to answer)."""
        if data.get("code") != ErrorCode.BUSY:
            logger.info("the computer's answer %s came too late: %s", ack, data.get("code"))
            return
        _, word, game_id = ack.split(":", 2)
        kind = _KINDS.get(word)
        if kind is None:
            return
        command = OfferCommand(game_id, kind, _answer(kind), ack=ack)

        async def again() -> None:
            await asyncio.sleep(BUSY_RETRY_S)
            if not self._closed:
                self.driver.handle(self.conn_id, command)

        self._spawn(again())

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
        payload: MoveJobPayload = {
            "position": game.start_fen,
            "moves": " ".join(game.moves[:ply]),
            "level": game.level,
            "clock": job_clock(game.tc, game.clocks, game.side),
        }
        while not self._closed and self.games.get(game.game_id) is game:
            try:
                job_id = await self.jobs.enqueue_move(
                    game.game_id, game.variant, payload, owner=game.opponent
                )
            except StoreUnavailableError as error:
                logger.warning(
                    "game %s: the move job could not be queued (%s)", game.game_id, error
                )
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
        if job.payload.get("moves") != " ".join(game.moves):
            # asked for another position (one taken back since): never played
            logger.info("game %s: job %s answers a position taken back", game.game_id, job.id)
            self._drop_job(game)
            self._maybe_ask(game)
            return
        if game.takeback_offered:
            # being accepted: the takeback makes this position stale (if it fails after all,
            # the offer's cancel asks again)
            self._drop_job(game)
            return
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


_KINDS: dict[str, OfferKind] = {"draw": "draw", "takeback": "takeback", "rematch": "rematch"}


def _opponent(players: object, side: str | None) -> str | None:
    """The id of the player on the other side than ``side`` in a snapshot's ``players``."""
    if not isinstance(players, dict) or side not in ("first", "second"):
        return None
    other = players.get("second" if side == "first" else "first")
    found = other.get("id") if isinstance(other, dict) else None
    return found if isinstance(found, str) else None


def _answer(kind: OfferKind) -> OfferAction:
    """The computer's answer to an offer of ``kind`` (docs/engines.md): no draws."""
    return "decline" if kind == "draw" else "accept"


def job_clock(
    tc: TimeControlView | None, clocks: ClocksView | None, side: str | None
) -> JobClock | None:
    """Both clocks in a move job's form (FISHNET.md) from the hub's ``tc`` and ``clocks``."""
    if not tc or not clocks or side not in ("first", "second"):
        return None
    if tc["kind"] in CORRESPONDENCE_KINDS:
        # Days per move, or no clock: the level's own move time. A day's budget is no clock
        # to search by (its share would run every move to the worker's 30-s cap).
        return None
    first, second = clocks["first"], clocks["second"]
    ours = first if side == "first" else second
    if tc["kind"] == "byoyomi":
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
        "increment_ms": int(tc["inc_s"]) * 1000 if tc["kind"] == "fischer" else 0,
        "byoyomi_ms": 0,
        "periods": 0,
    }

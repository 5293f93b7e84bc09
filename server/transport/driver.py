"""Drives the sans-I/O hub: feeds it commands and time, runs its effects in order.

One :class:`HubDriver` owns the :class:`~server.hub.hub.Hub` of the process. Everything the hub
is asked happens on the event loop thread, one call at a time, and the effects each call returns
run in order:

* ``Send`` / ``Broadcast`` — encoded once to JSON bytes and put into the connections' bounded
  outboxes (never awaited: a slow client cannot hold up anyone else).
* ``Persist`` — written by the :class:`Recorder` in a task, chained per game so a game's writes
  commit in the order the hub asked for them; then ``hub.persisted`` (or ``hub.persist_failed``)
  releases what waited for the write — a move, takeback or a player's ending is acknowledged
  and shown only after its commit. An end the server decided (``GameFinished.server_decided``:
  a flag fall …) is retried until it is stored (the hub expects that). A move with no earlier
  write of its game in flight (the usual case) needs no task: it is queued straight for the
  next group commit (:meth:`Recorder.submit_move`) and, once that batch is on its way to the
  database, ``hub.prepare`` builds what the commit will show (the next legal moves, the move
  event, the acks) while the database works, and the driver encodes those messages then too.
  At the commit the hub releases them (the same objects), their frames go into the outboxes
  and the outboxes are flushed at once: between the database's answer and the first byte to
  the players there is only the hub's bookkeeping, no encoding and no further turn of the
  event loop.
* ``Publish`` — the encoded message handed to the publisher (the bus), which must not block.
* ``Close`` — the connection is closed.
* ``TurnChanged`` — handed to :attr:`HubDriver.on_turn` (the notifier: e-mail), which must not
  block.
* ``OfferStored`` / ``OfferDropped`` — handed to :attr:`HubDriver.on_offer` (the stored seeks
  and challenges' writer), which must not block; it reports each write with
  :meth:`HubDriver.offer_written` / :meth:`HubDriver.offer_failed`, and the hub then releases
  the answer of the command that made or withdrew the offer. Without a writer they are
  reported written at once (after the other effects of the call).
* ``GamesWanted`` — a command would start a correspondence game with an absent offer owner:
  the owner's running correspondence games are read with :attr:`HubDriver.stored_games` (in a
  task), then the command runs again with them (``Hub.handle(..., games=...)``); a read that
  fails answers ``unavailable`` and nothing changes.

A ``match`` naming a player with no connection here, for a correspondence game, may be taken
by :attr:`HubDriver.offline_match`, which reads the account from the store, then gives it to
``Hub.match_offline`` (a correspondence challenge may wait for an offline player).

Deadlines (flags, automatic aborts, absence countdowns) are served by one timer handle that sleeps
until ``hub.next_deadline()`` and is re-armed after every hub call.

Hub time is ``time.monotonic_ns() // 1_000_000``: it never jumps with the wall clock. Stored
instants (a correspondence turn's start) are on the wall clock; :meth:`HubDriver.hub_time_of`
places them in hub time. Tests may inject both clocks (``clock``, ``wall``).

What the driver needs of the outside world (:class:`Recorder`, :class:`ColdLoader`,
:class:`Peer`, the publisher) is in :mod:`server.transport.driver_ports`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import datetime

from server.hub.commands import Command, MatchCommand
from server.hub.effects import (
    Broadcast,
    Close,
    ConnId,
    Effect,
    GameFinished,
    GamesWanted,
    MoveAppended,
    OfferDropped,
    OfferStored,
    Persist,
    Publish,
    Send,
    TurnChanged,
)
from server.hub.errors import ErrorCode
from server.hub.hub import Hub
from server.hub.identity import PlayerInfo
from server.hub.messages import Message, error_message
from server.transport.codec import encode_message
from server.transport.driver_ports import (
    ASK,
    AskStore,
    ColdLoader,
    Peer,
    PersistError,
    Publisher,
    Recorder,
    StoredGames,
)
from server.transport.outbox import Flusher, fan_out

__all__ = ["HubDriver", "monotonic_ms", "wall_ms"]

logger = logging.getLogger(__name__)

FINISH_RETRY_MIN_S = 0.1
FINISH_RETRY_MAX_S = 2.0


def monotonic_ms() -> int:
    """The hub's time source: integer milliseconds of the monotonic clock."""
    return time.monotonic_ns() // 1_000_000


def wall_ms() -> int:
    """The wall clock in integer milliseconds since the epoch (stored instants are on it)."""
    return time.time_ns() // 1_000_000


class HubDriver:
    """See the module docstring."""

    def __init__(
        self,
        hub: Hub,
        recorder: Recorder,
        publish: Publisher | None = None,
        clock: Callable[[], int] = monotonic_ms,
        wall: Callable[[], int] = wall_ms,
    ) -> None:
        self.hub = hub
        self._recorder = recorder
        self._publish = publish
        self._clock = clock
        self._wall = wall
        """The wall clock (ms since the epoch), to place stored instants in hub time
        (:meth:`hub_time_of`)."""
        self._peers: dict[ConnId, Peer] = {}
        self.on_turn: Callable[[TurnChanged], None] | None = None
        """Told every ``TurnChanged`` (a correspondence game's turn or end; must not block)."""
        self.internal: set[ConnId] = set()
        """Connections of the server's own players (the computer's seat): not counted in
        :attr:`connections`."""
        self._last_conn_id = 0
        self._timer: asyncio.TimerHandle | None = None
        self._armed_for: int | None = None
        self._chains: dict[str, asyncio.Future[None]] = {}
        self._writes: set[asyncio.Future[None]] = set()
        self._closing = False
        self._detached = False
        self._running_loop: asyncio.AbstractEventLoop | None = None
        self.flusher = Flusher()
        """Writes the outboxes that got messages, once per turn of the loop (the transport's
        outboxes use it), or at once after a move's commit."""
        self._ahead: dict[int, dict[int, tuple[Message, bytes]]] = {}
        """By persist token: the frames of the messages its commit will release, encoded while
        the database worked (keyed by ``id(message)``; the message is kept with its frame, so
        that its id stays its own)."""
        self._encoded_ahead: dict[int, tuple[Message, bytes]] | None = None
        """The frames encoded ahead for the hub call being run (see :meth:`run`)."""
        self.cold: ColdLoader | None = None
        """Set when correspondence games are loaded on use (docs/correspondence.md "Memory"):
        a command naming a game with no room here goes to it first."""
        self.stored_games: Callable[[PlayerInfo], Awaitable[Sequence[str] | None]] | None = None
        """Set with :attr:`cold`: a player's running correspondence games read from the store
        (``None`` for a player the store has none of, a guest), given to the hub at the
        connection so that its ``hello`` and limit see the cold games too."""
        self.on_offer: Callable[[OfferStored | OfferDropped], None] | None = None
        """Told every stored seek or challenge made or gone (must not block); it reports each
        write with :meth:`offer_written` / :meth:`offer_failed`."""
        self.offline_match: Callable[[ConnId, MatchCommand], bool] | None = None
        """Set when correspondence challenges may name an offline player: takes a ``match``
        it serves itself (the target's account read first), False for the hub's usual way."""
        self._connecting: dict[ConnId, list[tuple[Command, int]]] = {}
        """Connections waiting for :attr:`stored_games`: their commands, queued in order."""
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def _loop(self) -> asyncio.AbstractEventLoop:
        # Looked up once: on Python 3.11 every asyncio.get_running_loop() is a getpid() system
        # call, and the driver schedules something several times per move.
        loop = self._running_loop
        if loop is None or loop.is_closed():
            loop = self._running_loop = asyncio.get_running_loop()
        return loop

    # --- connections --------------------------------------------------------------------------

    @property
    def connections(self) -> int:
        """Clients' connections known to the hub (authenticated and not yet dropped)."""
        return len(self._peers) - len(self.internal)

    def new_conn_id(self) -> ConnId:
        """A connection id never used before in this process."""
        self._last_conn_id += 1
        return self._last_conn_id

    def connect(
        self,
        conn_id: ConnId,
        peer: Peer,
        player: PlayerInfo,
        stored: StoredGames = ASK,
    ) -> None:
        """An authenticated connection joins the hub (the hub answers with ``hello``).

        ``stored``: the player's stored correspondence games, read by the caller with
        :meth:`stored_of` before it told the client it is logged in (so that the hub knows the
        connection by then). Left out, the driver reads them itself when :attr:`stored_games`
        is set: the hub learns the connection after that read, and the connection's commands
        wait for it, in their order (the Bot API's link, which waits for its ``hello``).
        """
        self._peers[conn_id] = peer
        if isinstance(stored, AskStore):
            if self.stored_games is not None and not (player.guest or player.computer):
                self._connecting[conn_id] = []
                task = asyncio.get_running_loop().create_task(self._connect_stored(conn_id, player))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                return
            stored = None
        self.call(lambda now: self.hub.connect(conn_id, player, now, stored))

    async def stored_of(self, player: PlayerInfo) -> Sequence[str] | None:
        """The player's running correspondence games as the store lists them (one read;
        :attr:`stored_games`), or ``None``: no reader (a cluster), a guest, or a store that
        did not answer (then the lists show the games in memory, as before)."""
        reader = self.stored_games
        if reader is None or player.guest or player.computer:
            return None
        try:
            return await reader(player)
        except Exception as error:
            logger.warning("listing %s's stored games failed: %r", player.name, error)
            return None

    async def _connect_stored(self, conn_id: ConnId, player: PlayerInfo) -> None:
        stored = await self.stored_of(player)
        queued = self._connecting.pop(conn_id, None)
        if queued is None or conn_id not in self._peers:
            return  # closed meanwhile: the hub never knew it
        self.call(lambda now: self.hub.connect(conn_id, player, now, stored))
        for command, lag_ms in queued:
            self.handle(conn_id, command, lag_ms)

    def handle(self, conn_id: ConnId, command: Command, lag_ms: int = 0) -> None:
        """Run one parsed command of a connected connection."""
        if conn_id not in self._peers:
            return
        if self._connecting:  # empty but for a Bot API link's first instants
            waiting = self._connecting.get(conn_id)
            if waiting is not None:
                waiting.append((command, lag_ms))
                return
        cold = self.cold
        if cold is not None:
            # One attribute read and one dictionary look-up: a game running here is in it.
            game_id = getattr(command, "game_id", None)
            if (
                game_id is not None
                and game_id not in self.hub.state.rooms
                and cold.intercept(conn_id, command, lag_ms)
            ):
                return
        offline = self.offline_match
        if offline is not None and isinstance(command, MatchCommand) and offline(conn_id, command):
            return
        self.handle_now(conn_id, command, lag_ms)

    def handle_now(self, conn_id: ConnId, command: Command, lag_ms: int = 0) -> None:
        """Run one parsed command without asking the :attr:`cold` loader (it loaded the game)."""
        if conn_id not in self._peers:
            return
        try:
            self.call(lambda now: self.hub.handle(conn_id, command, now, lag_ms=lag_ms))
        except Exception:
            logger.exception("hub failed on %s from connection %d", type(command).__name__, conn_id)
            self.send(
                conn_id,
                error_message(ErrorCode.INTERNAL_ERROR, ack=command.ack),
            )

    def disconnect(self, conn_id: ConnId) -> None:
        """A connection closed (or was dropped); calling this twice does nothing."""
        self.internal.discard(conn_id)
        if self._peers.pop(conn_id, None) is None or self._detached:
            return
        if self._connecting.pop(conn_id, None) is not None:
            return  # the hub never knew it
        self.call(lambda now: self.hub.disconnect(conn_id, now))

    def detach(self) -> None:
        """The process is stopping: the connections it closes are not reported to the hub.

        Their absences would only add room events that nobody receives (the sockets are
        closing) after the versions the clients saw; the next process starts the absences of
        the players who do not come back, continuing each room's versions from the last one
        its clients saw (see :meth:`close`).
        """
        self._detached = True

    def send(self, conn_id: ConnId, message: Message) -> None:
        """Send one message to one connection, outside any hub call."""
        peer = self._peers.get(conn_id)
        if peer is not None:
            peer.outbox.put(encode_message(message))

    def drop(self, conn_id: ConnId) -> None:
        """Forget a connection whose outbox overflowed and tell the hub it is gone."""
        self.disconnect(conn_id)

    # --- effects ------------------------------------------------------------------------------

    def call(self, call: Callable[[int], list[Effect]]) -> None:
        """Make one hub call at the current time, run its effects, re-arm the timer."""
        try:
            effects = call(self._clock())
            self.run(effects)
        finally:
            self._rearm()

    def run(self, effects: list[Effect]) -> None:
        """Run effects in order (see the module docstring)."""
        encoded: dict[int, bytes] = {}
        ahead = self._encoded_ahead

        def frame_of(message: Message) -> bytes:
            # A room event is often both broadcast and published: encode it once.
            key = id(message)
            frame = encoded.get(key)
            if frame is None:
                # ``ahead`` holds its messages, so an id found there is this message's.
                early = None if ahead is None else ahead.get(key)
                frame = encoded[key] = encode_message(message) if early is None else early[1]
            return frame

        prepared: list[int] = []
        unstored: list[int] = []
        for effect in effects:
            if isinstance(effect, Send):
                peer = self._peers.get(effect.conn_id)
                if peer is not None:
                    peer.outbox.put(frame_of(effect.message))
            elif isinstance(effect, Broadcast):
                frame = frame_of(effect.message)
                outboxes = [
                    peer.outbox
                    for peer in map(self._peers.get, effect.conn_ids)
                    if peer is not None
                ]
                fan_out(outboxes, frame)
            elif isinstance(effect, Persist):
                if self._persist(effect):
                    prepared.append(effect.token)
            elif isinstance(effect, Publish):
                if self._publish is not None:
                    self._publish(effect.channel, frame_of(effect.message))
            elif isinstance(effect, Close):
                peer = self._peers.pop(effect.conn_id, None)
                if peer is not None:
                    peer.outbox.close()
                    peer.close_soon(1008, effect.reason)
            elif isinstance(effect, TurnChanged):
                if self.on_turn is not None:
                    self.on_turn(effect)
            elif isinstance(effect, OfferStored | OfferDropped):
                if self.on_offer is not None:
                    self.on_offer(effect)
                else:  # nothing stores offers here: the answers waiting for it go now
                    unstored.append(effect.token)
            elif isinstance(effect, GamesWanted):
                self._start(self._with_owner_games(effect))
        if unstored:
            self.call(lambda now: [e for t in unstored for e in self.hub.offer_written(t, now)])
        if prepared:
            # Runs after the move writer's flusher has sent the batch (woken by the submit,
            # it is ahead in the loop's queue): the preparation overlaps the database's work.
            self._loop.call_soon(self._prepare, prepared)

    def _start(self, work: Coroutine[object, object, None]) -> None:
        task = self._loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _with_owner_games(self, wanted: GamesWanted) -> None:
        """Read an absent offer owner's running correspondence games, then run the command
        again with them (see ``GamesWanted``)."""
        command, conn_id = wanted.command, wanted.conn_id
        reader = self.stored_games
        try:
            listed = None if reader is None else await reader(wanted.player)
        except Exception as error:
            logger.warning("listing %s's stored games failed: %r", wanted.player.name, error)
            refusal = Send(conn_id, error_message(ErrorCode.UNAVAILABLE, ack=command.ack))
            self.call(lambda now: [refusal])
            return
        if self._closing or conn_id not in self.hub.state.conns:
            return  # gone meanwhile: nobody to answer
        games = {**wanted.known, wanted.player.id: frozenset(listed or ())}
        try:
            self.call(
                lambda now: self.hub.handle(
                    conn_id, command, now, lag_ms=wanted.lag_ms, games=games
                )
            )
        except Exception:
            logger.exception("hub failed on %s from connection %d", type(command).__name__, conn_id)
            self.call(
                lambda now: [
                    Send(conn_id, error_message(ErrorCode.INTERNAL_ERROR, ack=command.ack))
                ]
            )

    def offer_written(self, token: int) -> None:
        """The store wrote ``OfferStored``/``OfferDropped(.., token)`` (see :attr:`on_offer`)."""
        self.call(lambda now: self.hub.offer_written(token, now))

    def offer_failed(self, token: int, reason: str) -> None:
        """The store did not write ``OfferStored(.., token)``: the hub drops the offer."""
        self.call(lambda now: self.hub.offer_failed(token, reason, now))

    # --- persistence --------------------------------------------------------------------------

    @property
    def pending_writes(self) -> int:
        return len(self._writes)

    def writing(self, game_id: str) -> bool:
        """Whether a write of ``game_id`` is in flight."""
        return game_id in self._chains

    def _persist(self, effect: Persist) -> bool:
        """Start writing ``effect``; True if it is a move queued without a task (to prepare)."""
        record = effect.record
        game_id = record.game_id
        previous = self._chains.get(game_id)
        write: asyncio.Future[None]
        if previous is None and isinstance(record, MoveAppended):
            write = self._loop.create_future()

            def written(error: PersistError | None) -> None:
                # Called by the move writer's flusher right after the commit: the hub hears of
                # it in the same turn of the event loop. The future is only bookkeeping (what
                # a later write of the game and close() wait for); it has no callbacks, so
                # resolving it schedules nothing.
                if write.done():
                    return  # cancelled: the driver closed without waiting for it
                write.set_result(None)
                self._forget_write(game_id, write)
                self._move_written(effect, error)

            self._recorder.submit_move(record, written)
            self._chains[game_id] = write
            self._writes.add(write)
            return True
        write = self._loop.create_task(
            self._write(effect, previous), name=f"persist:{game_id}:{effect.token}"
        )
        self._chains[game_id] = write
        self._writes.add(write)
        write.add_done_callback(lambda finished: self._forget_write(game_id, finished))
        return False

    def _forget_write(self, game_id: str, write: asyncio.Future[None]) -> None:
        self._writes.discard(write)
        if self._chains.get(game_id) is write:
            del self._chains[game_id]

    def _prepare(self, tokens: list[int]) -> None:
        for token in tokens:
            try:
                released = self.hub.prepare(token)
                if released:
                    frames: dict[int, tuple[Message, bytes]] = {}
                    for effect in released:
                        if isinstance(effect, Send | Broadcast | Publish):
                            message = effect.message
                            if id(message) not in frames:
                                frames[id(message)] = (message, encode_message(message))
                    self._ahead[token] = frames
            except Exception:  # only an optimisation: persisted() does the work if needed
                logger.exception("hub failed to prepare write %d", token)

    def _move_written(self, effect: Persist, error: PersistError | None) -> None:
        ahead = self._ahead.pop(effect.token, None)
        if error is None:
            self._encoded_ahead = ahead
            try:
                self.call(lambda now: self.hub.persisted(effect.token, now))
            finally:
                self._encoded_ahead = None
            # The ack and the move event go out now rather than at the end of this turn (the
            # writer's flusher may have more commits to report in it).
            self.flusher.flush()
        else:
            self._report_failure(effect, error.reason)

    async def _write(self, effect: Persist, previous: asyncio.Future[None] | None) -> None:
        if previous is not None:
            await asyncio.wait([previous])
        record = effect.record
        # The server's own decision (a flag fall …) cannot be refused: write it until stored.
        until_stored = isinstance(record, GameFinished) and record.server_decided
        delay = FINISH_RETRY_MIN_S
        while True:
            try:
                changes = await self._recorder.write(record)
            except Exception as error:
                reason = error.reason if isinstance(error, PersistError) else "server error"
                if not isinstance(error, PersistError):
                    logger.exception("writing %s failed", type(record).__name__)
                if until_stored and not self._closing:
                    logger.warning(
                        "end of game %s not stored (%s); retrying", record.game_id, reason
                    )
                    await asyncio.sleep(delay)
                    delay = min(FINISH_RETRY_MAX_S, delay * 2)
                    continue
                gone = error.offers_gone if isinstance(error, PersistError) else ()
                self._report_failure(effect, reason, gone)
                return
            break
        for player_id, pool, rating in changes:
            self.hub.set_rating(player_id, pool, rating)
        self.call(lambda now: self.hub.persisted(effect.token, now))

    def _report_failure(
        self, effect: Persist, reason: str, offers_gone: tuple[str, ...] = ()
    ) -> None:
        try:
            self.call(
                lambda now: self.hub.persist_failed(
                    effect.token, reason, now, offers_gone=offers_gone
                )
            )
        except Exception:
            logger.exception("hub failed to take back a failed write")

    # --- deadlines ----------------------------------------------------------------------------

    def hub_time_of(self, moment: datetime, now_ms: int) -> int:
        """The hub time of a stored wall-clock instant, ``now_ms`` being the hub's now: as
        long before ``now_ms`` as ``moment`` is before the wall clock's now (an instant the
        wall clock has not reached yet, from another machine's clock, counts as now)."""
        moment_ms = int(moment.timestamp() * 1000)
        return now_ms - max(0, self._wall() - moment_ms)

    def check_deadlines(self) -> None:
        """Serve the deadlines due now at once, whatever the timer waits for (a test that
        moves an injected clock calls it instead of waiting)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._armed_for = None
        self._on_deadline()

    def _rearm(self) -> None:
        deadline = self.hub.next_deadline()
        if deadline == self._armed_for or self._closing:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._armed_for = deadline
        if deadline is not None:
            delay = max(0.0, (deadline - self._clock()) / 1000)
            self._timer = self._loop.call_later(delay, self._on_deadline)

    def _on_deadline(self) -> None:
        self._timer = None
        self._armed_for = None
        try:
            self.run(self.hub.tick(self._clock()))
        except Exception:
            # Do not spin on a deadline the hub keeps failing on: try again in a second.
            logger.exception("hub tick failed")
            self._armed_for = -1
            self._timer = self._loop.call_later(1.0, self._on_deadline)
            return
        self._rearm()

    # --- shutdown -----------------------------------------------------------------------------

    async def close(self, timeout: float = 10.0) -> None:
        """Stop the timer, wait (up to ``timeout`` s) for the writes in flight, then keep the
        running rooms' event versions (:meth:`Recorder.keep_versions`)."""
        self._closing = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._writes:
            _, pending = await asyncio.wait(set(self._writes), timeout=timeout)
            for task in pending:
                task.cancel()
            if pending:
                logger.warning("%d writes did not finish before shutdown", len(pending))
        # The last event version of each running room, so that the next process continues each
        # room's versions without a gap (no hub call comes after this point).
        versions = self.hub.running_versions()
        if versions:
            await self._recorder.keep_versions(versions)

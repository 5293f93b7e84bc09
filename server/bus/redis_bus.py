"""The Redis bus: publish/subscribe between hub processes through one Redis server.

One dedicated subscriber connection is read by one task. ``SUBSCRIBE`` commands are written
on that connection under a lock, and Redis answers the commands of one connection in order,
so each subscribe confirmation is matched to its caller by a per-channel FIFO of waiters.

When the subscriber connection breaks (or an idle ``PING`` goes unanswered) the bus becomes
degraded: publishes fail fast with :class:`BusUnavailableError` and the reader reconnects
with exponential backoff. Once connected it resubscribes every channel and clears
``degraded`` after Redis has confirmed them all. Messages published during the outage are
lost (Redis pub/sub keeps nothing), which is why the hub resynchronises rooms on recovery.
"""

import asyncio
import contextlib
import logging
import random
from collections import deque
from urllib.parse import urlsplit, urlunsplit

from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.bus.base import (
    Bus,
    BusClosedError,
    BusUnavailableError,
    ChannelWorker,
    MessageHandler,
    check_channel,
    check_message,
)

__all__ = ["RedisBus", "redact_url"]

logger = logging.getLogger(__name__)

# Errors that mean "Redis is unreachable or the connection is broken".
_LINK_ERRORS = (RedisError, OSError)
_STOP_TIMEOUT_S = 5.0

_AckWaiter = asyncio.Future[None] | None  # None: a resubscription nobody awaits


def redact_url(url: str) -> str:
    """Return ``url`` with any password replaced by ``***``, fit for logs and errors."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


class RedisBus(Bus):
    """A :class:`Bus` over Redis pub/sub, for several hub processes sharing one Redis.

    :param url: ``redis://host:port/db`` (``rediss://`` and ``unix://`` work too).
    :param prefix: prepended to every channel name on the wire, to separate deployments.
    :param ping_interval_s: an idle subscriber connection is pinged this often; no reply
        within another interval counts as a lost connection.
    :param backoff_min_s: first delay between reconnection attempts; it doubles per failure.
    :param backoff_max_s: longest delay between reconnection attempts.
    :param timeout_s: limit for connecting, for one command, and for a subscribe confirmation.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "",
        ping_interval_s: float = 5.0,
        backoff_min_s: float = 0.05,
        backoff_max_s: float = 2.0,
        timeout_s: float = 5.0,
    ) -> None:
        super().__init__()
        if not 0 < backoff_min_s <= backoff_max_s:
            raise ValueError("need 0 < backoff_min_s <= backoff_max_s")
        if ping_interval_s <= 0 or timeout_s <= 0:
            raise ValueError("ping_interval_s and timeout_s must be positive")
        self._url = redact_url(url)
        self._prefix = prefix
        self._ping_interval = ping_interval_s
        self._backoff_min = backoff_min_s
        self._backoff_max = backoff_max_s
        self._timeout = timeout_s
        # RESP2 on the subscriber connection: pub/sub events arrive as plain replies, in order
        # with the confirmations (redis-py's RESP3 parser diverts them as push messages).
        self._pool = ConnectionPool.from_url(
            url, protocol=2, socket_connect_timeout=timeout_s, socket_timeout=timeout_s
        )
        # One retry lets a publish survive a pooled connection left stale by a Redis restart.
        self._publisher = Redis.from_url(
            url,
            socket_connect_timeout=timeout_s,
            socket_timeout=timeout_s,
            retry=Retry(NoBackoff(), 1),
        )
        self._workers: dict[str, ChannelWorker] = {}
        self._acks: dict[str, deque[_AckWaiter]] = {}
        self._resubscribing: set[str] = set()
        self._conn: AbstractConnection | None = None
        self._send_lock = asyncio.Lock()
        self._reader: asyncio.Task[None] | None = None
        self._closed = False

    async def start(self) -> None:
        """Open the subscriber connection and start the reader task.

        :raises BusUnavailableError: if Redis cannot be reached now.
        """
        if self._closed:
            raise BusClosedError("the bus is closed")
        if self._reader is not None:
            return
        try:
            conn = await self._connect()
        except _LINK_ERRORS as exc:
            raise BusUnavailableError(f"cannot connect to Redis at {self._url}: {exc}") from exc
        self._conn = conn
        self._reader = asyncio.create_task(self._run(conn), name="redis-bus-reader")

    async def publish(self, channel: str, message: bytes) -> None:
        check_channel(channel)
        check_message(message)
        self._check_started()
        if self._degraded:
            raise BusUnavailableError(
                f"cannot publish on {channel!r}: Redis at {self._url} is unreachable"
            )
        try:
            await self._publisher.publish(self._prefix + channel, message)
        except _LINK_ERRORS as exc:
            raise BusUnavailableError(f"cannot publish on {channel!r}: {exc}") from exc

    async def subscribe(self, channel: str, handler: MessageHandler) -> None:
        check_channel(channel)
        self._check_started()
        if channel in self._workers:
            raise ValueError(f"channel {channel!r} is already subscribed on this bus")
        if self._degraded or self._conn is None:
            raise BusUnavailableError(
                f"cannot subscribe to {channel!r}: Redis at {self._url} is unreachable"
            )
        worker = ChannelWorker(channel, handler)
        self._workers[channel] = worker
        ack: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        try:
            await self._send("SUBSCRIBE", channel, ack=ack)
            await asyncio.wait_for(ack, self._timeout)
        except BaseException as exc:
            await self._abandon(channel, worker)
            if isinstance(exc, TimeoutError):
                raise BusUnavailableError(
                    f"cannot subscribe to {channel!r}: no confirmation from Redis "
                    f"within {self._timeout}s"
                ) from exc
            if isinstance(exc, _LINK_ERRORS):
                raise BusUnavailableError(f"cannot subscribe to {channel!r}: {exc}") from exc
            raise

    async def unsubscribe(self, channel: str) -> None:
        check_channel(channel)
        worker = self._workers.pop(channel, None)
        if worker is None:
            return
        worker.stop()
        await self._send_quietly("UNSUBSCRIBE", channel)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.wait([self._reader])
        self._fail_acks(BusClosedError("the bus was closed"))
        workers = list(self._workers.values())
        self._workers.clear()
        for worker in workers:
            worker.stop()
        await asyncio.gather(*(worker.wait_stopped(_STOP_TIMEOUT_S) for worker in workers))
        if self._conn is not None:
            await self._drop(self._conn)
            self._conn = None
        await self._publisher.aclose()
        await self._pool.disconnect()

    @property
    def channels(self) -> frozenset[str]:
        """The channels this bus is subscribed to (or resubscribing after an outage)."""
        return frozenset(self._workers)

    def _check_started(self) -> None:
        if self._closed:
            raise BusClosedError("the bus is closed")
        if self._reader is None:
            raise BusClosedError("the bus is not started: call start() first")

    async def _abandon(self, channel: str, worker: ChannelWorker) -> None:
        """Undo a subscription whose confirmation failed."""
        if self._workers.get(channel) is not worker:
            return
        del self._workers[channel]
        worker.stop()
        # No await between removing the worker and queueing on the lock: a new subscribe
        # of the same channel cannot overtake this UNSUBSCRIBE on the wire.
        await self._send_quietly("UNSUBSCRIBE", channel)

    async def _send(self, command: str, *channels: str, ack: _AckWaiter = None) -> None:
        """Write one command on the subscriber connection; register ``ack`` for a SUBSCRIBE."""
        async with self._send_lock:
            conn = self._conn
            if conn is None or not conn.is_connected:
                raise RedisConnectionError(f"not connected to Redis at {self._url}")
            if command == "SUBSCRIBE":
                for channel in channels:
                    self._acks.setdefault(channel, deque()).append(ack)
            wire = [self._prefix + channel for channel in channels]
            await conn.send_command(command, *wire, check_health=False)

    async def _send_quietly(self, command: str, *channels: str) -> None:
        """Like :meth:`_send`; a broken connection is left to the reader to notice."""
        with contextlib.suppress(*_LINK_ERRORS):
            await self._send(command, *channels)

    async def _connect(self) -> AbstractConnection:
        conn: AbstractConnection = self._pool.make_connection()
        try:
            await conn.connect()
        except BaseException:
            await self._drop(conn)
            raise
        return conn

    async def _drop(self, conn: AbstractConnection) -> None:
        with contextlib.suppress(*_LINK_ERRORS):
            await conn.disconnect(nowait=True)

    async def _run(self, conn: AbstractConnection | None) -> None:
        """Reader task: read the subscriber connection, reconnect whenever it breaks."""
        failures = 0
        while True:
            try:
                if conn is None:
                    conn = await self._connect()
                    await self._resubscribe(conn)
                    logger.info("Redis bus reconnected to %s", self._url)
                failures = 0
                await self._read(conn)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not isinstance(exc, _LINK_ERRORS):
                    logger.exception("unexpected error in the Redis bus reader")
                if conn is not None:
                    await self._drop(conn)
                    conn = None
                self._connection_lost(exc)
                await asyncio.sleep(self._backoff(failures))
                failures += 1

    async def _resubscribe(self, conn: AbstractConnection) -> None:
        async with self._send_lock:
            self._conn = conn
            channels = list(self._workers)
            if channels:
                self._resubscribing = set(channels)
                for channel in channels:
                    self._acks.setdefault(channel, deque()).append(None)
                wire = [self._prefix + channel for channel in channels]
                await conn.send_command("SUBSCRIBE", *wire, check_health=False)
        if not channels:
            self._recovered()

    async def _read(self, conn: AbstractConnection) -> None:
        awaiting_pong = False
        while True:
            response = await conn.read_response(timeout=self._ping_interval)
            if response is None:  # nothing arrived for a whole interval
                if awaiting_pong:
                    raise RedisTimeoutError(
                        f"Redis at {self._url} did not answer PING within {self._ping_interval}s"
                    )
                async with self._send_lock:
                    await conn.send_command("PING", check_health=False)
                awaiting_pong = True
                continue
            awaiting_pong = False
            self._dispatch(response)

    def _dispatch(self, response: object) -> None:
        if not isinstance(response, list) or len(response) < 3:
            return  # PONG, or a reply we do not use
        kind, raw_channel, payload = response[0], response[1], response[2]
        channel = self._channel_name(raw_channel)
        if channel is None:
            return
        if kind == b"message":
            worker = self._workers.get(channel)
            if worker is not None and isinstance(payload, bytes):
                worker.put(payload)
        elif kind == b"subscribe":
            self._confirmed(channel)

    def _channel_name(self, raw: object) -> str | None:
        if not isinstance(raw, bytes):
            return None
        try:
            name = raw.decode()
        except UnicodeDecodeError:
            return None
        if not name.startswith(self._prefix):
            return None
        return name[len(self._prefix) :]

    def _confirmed(self, channel: str) -> None:
        waiters = self._acks.get(channel)
        if waiters:
            waiter = waiters.popleft()
            if not waiters:
                del self._acks[channel]
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
        if self._resubscribing:
            self._resubscribing.discard(channel)
            if not self._resubscribing:
                self._recovered()

    def _recovered(self) -> None:
        if self._degraded:
            logger.info("Redis bus recovered: %d channel(s) resubscribed", len(self._workers))
        self._set_degraded(False)

    def _connection_lost(self, exc: BaseException) -> None:
        self._conn = None
        self._resubscribing.clear()
        self._fail_acks(BusUnavailableError(f"lost the connection to Redis: {exc}"))
        if not self._degraded:
            logger.warning("Redis bus lost %s (%s); reconnecting", self._url, exc)
        self._set_degraded(True)

    def _fail_acks(self, error: Exception) -> None:
        for waiters in self._acks.values():
            for waiter in waiters:
                if waiter is not None and not waiter.done():
                    waiter.set_exception(error)
        self._acks.clear()

    def _backoff(self, failures: int) -> float:
        """Delay before reconnection attempt ``failures + 1``: doubling, capped, jittered."""
        ceiling = min(self._backoff_max, self._backoff_min * 2 ** min(failures, 30))
        return random.uniform(ceiling / 2, ceiling)

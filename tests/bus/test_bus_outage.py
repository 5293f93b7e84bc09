"""RedisBus through a Redis outage, on a private redis-server that the test kills or freezes."""

import asyncio

import pytest
from bus_support import Inbox, ThrowawayRedis, wait_until

from server.bus import BusUnavailableError, Cluster, RedisBus


def fast_bus(url: str) -> RedisBus:
    return RedisBus(
        url, prefix="t:", ping_interval_s=0.2, backoff_min_s=0.02, backoff_max_s=0.2, timeout_s=1
    )


def count_connects(bus: RedisBus) -> list[int]:
    """A counter of the bus's connection attempts (its reader's reconnections included)."""
    attempts = [0]
    connect = bus._connect

    async def counted() -> object:
        attempts[0] += 1
        return await connect()

    bus._connect = counted  # type: ignore[method-assign,assignment]
    return attempts


async def test_kill_and_restart_degrades_then_recovers_by_itself(
    throwaway_redis: ThrowawayRedis,
) -> None:
    async with fast_bus(throwaway_redis.url) as bus, fast_bus(throwaway_redis.url) as peer:
        changes: list[bool] = []
        bus.add_degraded_listener(changes.append)
        rooms = {name: Inbox() for name in ("room:1", "room:2", "lobby")}
        for name, inbox in rooms.items():
            await bus.subscribe(name, inbox)
        await peer.publish("room:1", b"before")
        await wait_until(lambda: rooms["room:1"].payloads == [b"before"])

        throwaway_redis.kill()
        await wait_until(lambda: bus.degraded)
        assert changes == [True]
        with pytest.raises(BusUnavailableError, match="unreachable"):
            await bus.publish("room:1", b"lost")
        with pytest.raises(BusUnavailableError):
            await bus.subscribe("room:3", Inbox())
        assert "room:3" not in bus.channels
        attempts = count_connects(bus)
        await wait_until(lambda: attempts[0] >= 3)  # several failed reconnection attempts
        assert bus.degraded

        throwaway_redis.start()
        await wait_until(lambda: not bus.degraded)
        assert changes == [True, False]
        assert bus.channels == set(rooms)
        await wait_until(lambda: not peer.degraded)
        for name in rooms:
            await peer.publish(name, f"after {name}".encode())
        await bus.publish("room:2", b"own")
        await wait_until(lambda: all(inbox.payloads[-1:] != [] for inbox in rooms.values()))
        await wait_until(lambda: rooms["room:2"].payloads[-1:] == [b"own"])
        assert rooms["room:1"].payloads == [b"before", b"after room:1"]
        assert rooms["room:2"].payloads == [b"after room:2", b"own"]
        assert rooms["lobby"].payloads == [b"after lobby"]
        # New subscriptions work again too.
        late = Inbox()
        await bus.subscribe("room:3", late)
        await peer.publish("room:3", b"late")
        await wait_until(lambda: late.payloads == [b"late"])


async def test_async_listener_runs_on_each_change(throwaway_redis: ThrowawayRedis) -> None:
    async with fast_bus(throwaway_redis.url) as bus:
        seen: list[bool] = []

        async def listener(degraded: bool) -> None:
            await asyncio.sleep(0)  # a listener that awaits: the thing under test
            seen.append(degraded)

        remove = bus.add_degraded_listener(listener)
        throwaway_redis.kill()
        await wait_until(lambda: seen == [True])
        throwaway_redis.start()
        await wait_until(lambda: seen == [True, False])
        remove()
        probe: list[bool] = []

        async def sentinel(degraded: bool) -> None:  # runs after a removed listener would
            await asyncio.sleep(0)  # awaits like the listener it stands for
            probe.append(degraded)

        bus.add_degraded_listener(sentinel)
        throwaway_redis.kill()
        await wait_until(lambda: probe == [True])
        assert seen == [True, False]


async def test_frozen_redis_is_detected_by_ping(throwaway_redis: ThrowawayRedis) -> None:
    """A server that stops answering (SIGSTOP) keeps the socket open: only PING notices."""
    async with fast_bus(throwaway_redis.url) as bus, fast_bus(throwaway_redis.url) as peer:
        inbox = Inbox()
        await bus.subscribe("room", inbox)
        throwaway_redis.freeze()
        try:
            await wait_until(lambda: bus.degraded, timeout=5)
        finally:
            throwaway_redis.thaw()
        # The peer pinged the same frozen server: it may be degraded too and recovers on its own.
        await wait_until(lambda: not bus.degraded and not peer.degraded)
        await peer.publish("room", b"thawed")
        await wait_until(lambda: inbox.payloads == [b"thawed"])


async def test_start_fails_clearly_when_redis_is_down(throwaway_redis: ThrowawayRedis) -> None:
    throwaway_redis.kill()
    bus = fast_bus(throwaway_redis.url)
    with pytest.raises(BusUnavailableError, match=f"127.0.0.1:{throwaway_redis.port}"):
        await bus.start()
    await bus.close()


async def test_cluster_calls_fail_clearly_and_recover(throwaway_redis: ThrowawayRedis) -> None:
    cluster = Cluster.redis(throwaway_redis.url, prefix="t:", timeout_s=1)
    try:
        assert await cluster.leases.acquire("g1", "node-a", 60_000)
        throwaway_redis.kill()
        with pytest.raises(BusUnavailableError):
            await cluster.leases.owner("g1")
        with pytest.raises(BusUnavailableError):
            await cluster.presence.heartbeat("node-a", 1000)
        throwaway_redis.start()  # a fresh server without data: scripts are reloaded on demand
        assert await cluster.leases.owner("g1") is None
        assert await cluster.leases.acquire("g1", "node-b", 60_000)
        assert await cluster.leases.owner("g1") == "node-b"
    finally:
        await cluster.close()


async def test_subscribe_cut_off_by_an_outage_leaves_nothing_behind(
    throwaway_redis: ThrowawayRedis,
) -> None:
    async with fast_bus(throwaway_redis.url) as bus:
        throwaway_redis.freeze()  # the SUBSCRIBE is written but never confirmed
        try:
            with pytest.raises(BusUnavailableError):
                await bus.subscribe("room", Inbox())
            assert "room" not in bus.channels
            await wait_until(lambda: bus.degraded)
        finally:
            throwaway_redis.thaw()
        await wait_until(lambda: not bus.degraded)
        assert bus.channels == set()
        inbox = Inbox()
        await bus.subscribe("room", inbox)
        await bus.publish("room", b"m")
        await wait_until(lambda: inbox.payloads == [b"m"])

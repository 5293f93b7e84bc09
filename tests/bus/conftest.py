"""Fixtures of the bus and cluster tests: real Redis, isolated by a random key prefix."""

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from bus_support import (
    REDIS_URL,
    BusFactory,
    ClusterFactory,
    ThrowawayRedis,
    delete_prefixed,
)

from server.bus import Bus, InProcessBroker, InProcessBus, RedisBus


@pytest.fixture
async def prefix() -> AsyncIterator[str]:
    """A fresh key and channel prefix; the test's keys are deleted afterwards."""
    value = f"test:bus:{uuid.uuid4().hex}:"
    yield value
    await delete_prefixed(REDIS_URL, value)


@pytest.fixture(params=["memory", "redis"])
async def make_bus(request: pytest.FixtureRequest, prefix: str) -> AsyncIterator[BusFactory]:
    """Start buses that reach each other like the nodes of one cluster; closed afterwards."""
    broker = InProcessBroker()
    buses: list[Bus] = []

    async def make() -> Bus:
        bus: Bus
        if request.param == "memory":
            bus = InProcessBus(broker)
        else:
            bus = RedisBus(REDIS_URL, prefix=prefix, ping_interval_s=1.0)
        await bus.start()
        buses.append(bus)
        return bus

    yield make
    for bus in buses:
        await bus.close()


@pytest.fixture(params=["memory", "redis"])
async def make_cluster(
    request: pytest.FixtureRequest, prefix: str
) -> AsyncIterator[ClusterFactory]:
    """Make cluster handles (one per simulated node) over one shared state; closed afterwards.
    ``make_cluster.elapse(ms)`` lets time pass for that state."""
    factory = ClusterFactory(request.param, prefix)
    yield factory
    await factory.close()


@pytest.fixture
def throwaway_redis(tmp_path: Path) -> Iterator[ThrowawayRedis]:
    server = ThrowawayRedis(tmp_path)
    server.start()
    yield server
    server.stop()

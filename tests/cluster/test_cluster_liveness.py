"""A node's view of which nodes are live: one in-process hub in cluster mode on the real Redis.

Nodes look the live set up at most every ``LIVE_RECHECK_S``; a node that started after the
last look must not be taken for dead (its games would be refused with ``node_unavailable``,
as happened to a cluster test in the first second after the cluster started). Nor must a node
be taken for dead because its heartbeat waited behind a burst of seek registry updates in the
state queue (the cluster storm's start-up: each hub logged the other "gone").
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from support import REDIS_URL, node_settings, poll

from server.app import App
from server.cluster.node import ClusterDriver


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    settings = node_settings("node-a", f"sqlite+aiosqlite:///{tmp_path / 'hub.sqlite3'}", f"liveness-{uuid.uuid4().hex[:8]}:", presence_ttl_ms=600)
    started = App(settings)
    await started.start()
    try:
        yield started
    finally:
        await started.stop()


async def test_a_node_that_started_since_the_last_look_is_not_taken_for_dead(app: App) -> None:
    driver = app.driver
    assert isinstance(driver, ClusterDriver) and app.cluster is not None
    assert await driver.alive("node-a")  # itself
    assert not await driver.alive("node-b")  # a look, just now: node-b is not there
    await app.cluster.presence.heartbeat("node-b", 30_000)  # node-b starts right after it
    assert await driver.alive("node-b")
    assert not await driver.alive("node-c")


async def test_the_heartbeat_does_not_wait_behind_the_state_queue(app: App) -> None:
    driver = app.driver
    assert isinstance(driver, ClusterDriver)
    release = asyncio.Event()
    driver.sender.enqueue(release.wait, state=True)  # seek updates that take their time
    key = f"{app.settings.bus_prefix}node:node-a"
    redis = Redis.from_url(REDIS_URL)
    try:
        await redis.delete(key)  # the node's key lapsed: the next heartbeat sets it again
        assert await poll(lambda: redis.exists(key), timeout=10.0) == 1
    finally:
        release.set()
        await redis.aclose()


async def test_background_work_never_started_at_close_is_closed_not_left_unawaited(
    tmp_path: Path,
) -> None:
    """A background coroutine spawned just before the node closes (its task cancelled before
    its first step) or after (a timer, such as the seeks' reconcile, firing late) is closed:
    none is left never awaited (a RuntimeWarning when it is collected)."""
    settings = node_settings("node-a", f"sqlite+aiosqlite:///{tmp_path / 'hub.sqlite3'}", f"liveness-{uuid.uuid4().hex[:8]}:")
    app = App(settings)
    await app.start()
    driver = app.driver
    assert isinstance(driver, ClusterDriver)
    ran: list[str] = []

    async def work(name: str) -> None:
        ran.append(name)

    before = work("before")
    driver.spawn(before, "before")
    started = list(driver._background)
    for task in started:  # as close does, here before the task's first step
        task.cancel()
    await asyncio.gather(*started, return_exceptions=True)
    await asyncio.sleep(0)  # the tasks' done callbacks
    await app.stop()
    after = work("after")  # a timer firing after the close
    driver.spawn(after, "after")
    assert inspect.getcoroutinestate(before) == inspect.CORO_CLOSED
    assert inspect.getcoroutinestate(after) == inspect.CORO_CLOSED
    assert ran == []

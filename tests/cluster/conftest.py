"""Fixtures of the cluster tests: real hub processes, a private real Redis, a fresh database.

Each test module gets one :class:`LocalCluster` (three hubs behind the TCP proxy, a private
``redis-server`` it may stop and restart, and a new PostgreSQL database dropped afterwards), so
process start-up is paid once per module. When a test fails, the tail of every process's log is
printed with the failure.

``VARIANT_HUB_CLUSTER_HUB_ARGV`` (space-separated) replaces the hub command, for debugging.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from cluster_support import HUB_ENV, LocalCluster
from support import create_database, drop_database

HUB_ARGV = shlex.split(os.environ.get("VARIANT_HUB_CLUSTER_HUB_ARGV", "")) or [
    sys.executable,
    "-m",
    "server",
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster() -> AsyncIterator[LocalCluster]:
    url = await create_database("cluster_test")
    local = LocalCluster(hubs=3, database_url=url, redis_url=None, env=HUB_ENV, hub_argv=HUB_ARGV)
    try:
        await local.start()
        yield local
    finally:
        await local.stop()
        await drop_database(url)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


_FAILED = pytest.StashKey[bool]()


@pytest.fixture(autouse=True)
def _logs_on_failure(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if request.node.stash.get(_FAILED, False) and "cluster" in request.fixturenames:
        local: LocalCluster = request.getfixturevalue("cluster")
        print(local.logs())

"""Message bus and cluster state: in-process for one node, Redis for several.

The composition root builds both from the settings::

    bus = create_bus(settings)
    cluster = create_cluster(settings)
    await bus.start()
    ...
    await bus.close()
    await cluster.close()
"""

from server.bus.base import (
    Bus,
    BusClosedError,
    BusError,
    BusUnavailableError,
    DegradedListener,
    MessageHandler,
)
from server.bus.cluster import Cluster
from server.bus.memory import InProcessBroker, InProcessBus
from server.bus.redis_bus import RedisBus
from server.bus.state import (
    GameLeases,
    GameRole,
    NodeNotLiveError,
    Presence,
    PresenceChanges,
    SeekRegistry,
)
from server.bus.state_memory import InProcessClusterState
from server.config import Settings

__all__ = [
    "Bus",
    "BusClosedError",
    "BusError",
    "BusUnavailableError",
    "Cluster",
    "DegradedListener",
    "GameLeases",
    "GameRole",
    "InProcessBroker",
    "InProcessBus",
    "InProcessClusterState",
    "MessageHandler",
    "NodeNotLiveError",
    "Presence",
    "PresenceChanges",
    "RedisBus",
    "SeekRegistry",
    "create_bus",
    "create_cluster",
]


def create_bus(settings: Settings) -> Bus:
    """Return a :class:`RedisBus` if ``settings.redis_url`` is set, else an :class:`InProcessBus`.

    The bus is not started: call ``await bus.start()`` (or use ``async with``).
    """
    if settings.uses_redis:
        return RedisBus(
            settings.redis_url,
            prefix=settings.bus_prefix,
            ping_interval_s=settings.bus_ping_interval_s,
            backoff_min_s=min(0.05, settings.bus_backoff_max_s),
            backoff_max_s=settings.bus_backoff_max_s,
        )
    return InProcessBus()


def create_cluster(settings: Settings) -> Cluster:
    """Return cluster state over Redis if ``settings.redis_url`` is set, else in-process state."""
    if settings.uses_redis:
        return Cluster.redis(settings.redis_url, prefix=settings.bus_prefix)
    return Cluster.in_process()

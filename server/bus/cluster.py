"""State shared by the nodes of a cluster: :class:`Cluster` holds game leases, the seek registry
and presence of one backend (Redis, or this process's memory).

Semantics and interfaces: :mod:`server.bus.state`; implementations:
:mod:`server.bus.state_redis`, :mod:`server.bus.state_memory`.
"""

from collections.abc import Awaitable, Callable

from server.bus.state import GameLeases, Presence, SeekRegistry
from server.bus.state_memory import InProcessClusterState, memory_state
from server.bus.state_redis import redis_state

__all__ = ["Cluster"]


class Cluster:
    """The three shared-state primitives of one backend, closed together."""

    def __init__(
        self,
        leases: GameLeases,
        seeks: SeekRegistry,
        presence: Presence,
        closer: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.leases = leases
        self.seeks = seeks
        self.presence = presence
        self._closer = closer

    @classmethod
    def in_process(cls, state: "InProcessClusterState | None" = None) -> "Cluster":
        """Cluster state in this process's memory; nodes sharing ``state`` see each other."""
        return cls(*memory_state(state if state is not None else InProcessClusterState()))

    @classmethod
    def redis(cls, url: str, *, prefix: str = "", timeout_s: float = 5.0) -> "Cluster":
        """Cluster state in the Redis server at ``url``, keys prefixed by ``prefix``."""
        leases, seeks, presence, client = redis_state(url, prefix, timeout_s)
        return cls(leases, seeks, presence, client.aclose)

    async def close(self) -> None:
        """Release the backend's connections; the state itself stays for the other nodes."""
        if self._closer is not None:
            closer, self._closer = self._closer, None
            await closer()

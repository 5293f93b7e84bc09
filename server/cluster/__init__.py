"""Scale-out: several hub processes behind one address (docs/architecture.md, "Scale-out").

:class:`ClusterDriver` replaces the transport's ``HubDriver`` when the settings name a Redis
server; ``server.app`` builds it. This package sits between the composition root and the
adapters: it uses the bus, the cluster state, the store and the transport's driver.
"""

from server.cluster.node import ClusterDriver

__all__ = ["ClusterDriver"]

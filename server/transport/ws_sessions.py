"""The logged-in websocket connections of each player, to close those whose session ended.

:class:`PlayerConnections` keeps a registered player's connections (added at the login,
discarded when the connection ends). When some of the player's sessions end elsewhere
(``logout_everywhere``, a password change: :attr:`~server.transport.accounts.Accounts.on_revoked`)
it closes the connections on them. A guest's session is its connection's: nothing to revoke,
so a guest's connections are not kept.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from websockets.frames import CloseCode

from server.hub.identity import PlayerId

if TYPE_CHECKING:
    from server.transport.server import ClientConnection

__all__ = ["PlayerConnections"]


class PlayerConnections:
    """See the module docstring."""

    def __init__(self) -> None:
        self._players: dict[PlayerId, set[ClientConnection]] = {}
        """The logged-in connections of each registered player."""

    def add(self, connection: ClientConnection) -> None:
        """The connection logged in."""
        identity = connection.identity
        assert identity is not None
        if not identity.guest:  # a guest's session is its connection's: nothing to revoke
            self._players.setdefault(identity.info.id, set()).add(connection)

    def discard(self, connection: ClientConnection) -> None:
        """The connection ended."""
        if connection.identity is None:
            return
        player_id = connection.identity.info.id
        group = self._players.get(player_id)
        if group is not None:
            group.discard(connection)
            if not group:
                del self._players[player_id]

    def revoked(self, player_id: PlayerId, kept: str | None) -> None:
        """The player's sessions but ``kept`` ended: close their connections on them (on the
        next loop turn, after the connection that asked has answered)."""
        for connection in self._players.get(player_id, ()):
            identity = connection.identity
            if identity is not None and identity.token != kept:
                asyncio.get_running_loop().call_soon(
                    connection.close_soon, CloseCode.NORMAL_CLOSURE, "session ended elsewhere"
                )

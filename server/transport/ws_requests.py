"""A websocket connection's requests that are not hub commands: tournaments and stored games.

:meth:`ClientConnection._dispatch <server.transport.server.ClientConnection._dispatch>` hands
:func:`on_tournament` the ``tournament_*`` frames (answered by the connection's
:class:`~server.transport.tournament_ws.TournamentDoor`, made at its first such frame) and
:func:`on_review` the review requests (``games``, ``review``, ``export``…; see
:mod:`server.transport.review`), which read the store and need no login.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.hub.errors import ErrorCode
from server.hub.incoming import ReviewRequest, TournamentRequest
from server.transport.analysis_api import Requester
from server.transport.codec import encode
from server.transport.review import ReviewStore, review_ws
from server.transport.review_reads import account_key, address_key
from server.transport.tournament_ws import TournamentDoor

if TYPE_CHECKING:
    from server.transport.server import ClientConnection

__all__ = ["on_review", "on_tournament"]


async def on_tournament(conn: ClientConnection, request: TournamentRequest) -> None:
    """A ``tournament_*`` frame, answered by the connection's tournament door."""
    desk, door, identity = conn.server.tournaments, conn.tournament_door, conn.identity
    if desk is None:  # no director behind this server: no such command here
        conn.error(ErrorCode.BAD_REQUEST, "tournaments are not served here", request.ack)
        return
    if door is None:
        door = conn.tournament_door = TournamentDoor(desk, conn.send, conn.outbox.put)
    # The hub's copy of a player: its ratings follow the games played since the login.
    info = None if identity is None else identity.info
    online = None if info is None else conn.server.driver.hub.state.players.get(info.id)
    await door.handle(request, info if online is None else online.info)


async def on_review(conn: ClientConnection, store: ReviewStore, request: ReviewRequest) -> None:
    """A review request, answered from the store."""
    # Stored games are public (as over HTTP): no login needed, but to request an analysis
    # (server.transport.analysis_api checks who). A registered player's reads are counted
    # per account, anyone else's per address (server/transport/review_reads.py).
    identity = conn.identity
    info = identity.info if identity is not None else None
    player = None if info is None else Requester(info.id, info.name, info.guest)
    requester = (
        account_key(info.name) if info is not None and not info.guest else address_key(conn.address)
    )
    reads = conn.server.reads
    conn.outbox.put(encode(await review_ws(store, request, player, reads, requester)))

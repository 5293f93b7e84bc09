"""What the HTTP API's handlers share: the hub driver, accounts, store and settings.

A handler reaches it with ``request.app[CONTEXT]``. Errors are answered the lichess way: a
status code and a JSON body ``{"error": "…"}`` (:func:`api_error`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

from aiohttp import web

from server.config import Settings
from server.hub.identity import PlayerId, PlayerInfo
from server.transport.accounts import Accounts, store_player_id
from server.transport.addresses import client_address
from server.transport.driver import HubDriver
from server.transport.http import HttpRoutes
from server.transport.http_api.callers import CallerCache
from server.transport.http_api.link import BotLink, BotLinks, CommandFailed
from server.transport.ratelimit import KeyedBuckets

__all__ = ["CONTEXT", "ApiContext", "ApiError", "api_error", "held_link"]


@dataclass
class ApiContext:
    """The adapters the HTTP API works with (wired by :mod:`server.app`)."""

    settings: Settings
    driver: HubDriver
    """The process's hub driver (a cluster driver when there are several hubs): every command
    goes through it, as the websocket and ICS doors' commands do."""
    accounts: Accounts
    store: Any
    """The :class:`~server.store.Store` (typed loosely: transport does not import the store)."""
    pages: HttpRoutes
    """The plain pages of the websocket server, for requests on a kept-alive API connection."""
    work: Any = None
    """The engine workers' job queue (a :class:`~server.transport.http_api.fishnet.WorkQueue`,
    :class:`server.app.jobs.JobQueue`), or None: no ``/fishnet`` endpoints."""
    analysis: Any = None
    """The computer analyses (:class:`server.app.analysis.AnalysisDesk`): the store's reads of
    games and analyses, and requests that queue a job; None: no ``/api/game/{id}/analysis``."""
    tournaments: Any = None
    """The tournament director (a :class:`~server.transport.tournament_service.TournamentService`),
    or None: no tournament endpoints (503)."""
    closing: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the server stops: open streams end."""
    callers: CallerCache = field(default_factory=CallerCache)
    """Who each bearer token stands for, kept a few seconds (:mod:`.callers`)."""
    links: BotLinks = field(init=False)
    """The bots' hub connections on this process."""
    tournament_writes: KeyedBuckets = field(init=False)
    """Tournament requests that change something (create, join, withdraw), per account."""

    def __post_init__(self) -> None:
        self.links = BotLinks(self.driver, self.settings)
        self.tournament_writes = KeyedBuckets(
            self.settings.rate_limit_per_s, self.settings.rate_limit_burst
        )
        self.accounts.on_revoked.append(self._revoked)

    def _revoked(self, player_id: PlayerId, kept: str | None) -> None:
        """A player's sessions ended: their cached session tokens are resolved again (and
        refused) at once, not after the cache's few seconds."""
        account_id = store_player_id(player_id)
        if account_id is not None:
            self.callers.forget_account(account_id)


CONTEXT = web.AppKey("context", ApiContext)


class ApiError(Exception):
    """An HTTP error answered as lichess's ``{"error": message}`` (by the app's middleware)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers
        """Headers of the answer (``Retry-After`` of a 429)."""


def api_error(status: int, message: str, headers: dict[str, str] | None = None) -> NoReturn:
    """Stop the handler with ``status`` and ``{"error": message}`` (and ``headers``, such as a
    429's ``Retry-After``)."""
    raise ApiError(status, message, headers)


def request_address(request: web.Request) -> str:
    """The client address an HTTP API request comes from (the one place this door reads it:
    :func:`~server.transport.addresses.client_address`, a trusted balancer's PROXY header
    honoured)."""
    return client_address(request.transport) if request.transport is not None else "unknown"


@contextlib.asynccontextmanager
async def held_link(request: web.Request, player: PlayerInfo) -> AsyncIterator[BotLink]:
    """The player's hub link for one request: commands sent in the block are the hub's; a
    refusal (:class:`CommandFailed`) is answered lichess's way (status, ``{"error": …}``); the
    link is released at the end, whatever happened."""
    link = await request.app[CONTEXT].links.link(player)
    try:
        yield link
    except CommandFailed as error:
        api_error(error.status, error.message)
    finally:
        link.release()

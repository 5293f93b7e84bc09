"""Who is calling: ``Authorization: Bearer <token>``, a personal API token (``vhb_…``, see
``POST /api/token``) or the session token a websocket login returned.

A resolved token is kept a few seconds in this process (:mod:`.callers`): a token revoked here is
refused at once, one revoked through another hub within the cache's TTL. A guest's session is
refused (the API is for registered accounts).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from aiohttp import web

from server.hub.identity import PlayerInfo
from server.transport.accounts import AuthError, StoredPlayer
from server.transport.http_api.context import CONTEXT, api_error

__all__ = ["Caller", "bearer", "caller", "store_call"]

logger = logging.getLogger(__name__)

API_TOKEN_PREFIX = "vhb_"
MAX_TOKEN_LENGTH = 256


@dataclass(frozen=True)
class Caller:
    """The account a request acts for, and its hub identity."""

    account: StoredPlayer
    info: PlayerInfo


_T = TypeVar("_T")


async def store_call(call: Awaitable[_T]) -> _T:
    """Await a store call; the database being unreachable is a 503."""
    try:
        return await call
    except Exception as error:
        if type(error).__name__ in ("StoreUnavailableError", "AccountsUnavailable"):
            api_error(503, "The database is unavailable; please try again soon.")
        raise


def bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    return token


async def caller(request: web.Request) -> Caller:
    """The authenticated caller, or a 401 ``{"error": "No such token"}`` (lichess's words)."""
    token = bearer(request)
    if token is None:
        api_error(401, "Missing or malformed token: send 'Authorization: Bearer <token>'.")
    context = request.app[CONTEXT]
    cached = context.callers.get(token)
    if cached is not None:
        assert isinstance(cached, Caller)
        return cached
    account: StoredPlayer | None
    if token.startswith(API_TOKEN_PREFIX):
        account = await store_call(context.store.api_token_player(token))
    else:
        account = await store_call(context.accounts.session_account(token))
    if account is None:
        api_error(401, "No such token")
    try:
        info = await context.accounts.player_info(account)
    except AuthError as error:
        api_error(503, error.message)
    found = Caller(account, info)
    context.callers.put(token, account.id, found)
    return found

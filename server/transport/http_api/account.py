"""Accounts: ``GET /api/account``, ``POST /api/bot/account/upgrade``, ``GET /api/user/{name}``.

An account is shown as lichess shows one: ``id`` (the name in lower case), ``username``,
``title`` (``"BOT"`` for a bot account, absent otherwise), ``createdAt`` (ms since the epoch),
``perfs`` (one entry per rating pool the player has, keyed ``<variant>.<speed>``).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from aiohttp import web

from server.hub.identity import PlayerInfo
from server.transport.accounts import StoredPlayer
from server.transport.http_api.auth import Caller, caller, store_call
from server.transport.http_api.context import CONTEXT, api_error
from server.transport.http_api.lichess import OK

routes = web.RouteTableDef()

BOT_TITLE = "BOT"


class PerfView(TypedDict):
    rating: int
    prov: bool


class AccountView(TypedDict):
    """lichess's account object (``GET /api/account``), as far as we fill it."""

    id: str
    username: str
    createdAt: int
    title: NotRequired[str]
    perfs: NotRequired[dict[str, PerfView]]
    """By pool: ``"minishogi"``, ``"chess.blitz"``."""
    online: NotRequired[bool]
    """In the public user view (``GET /api/user/{name}``): a bot's event stream is open."""


def account_view(account: StoredPlayer, info: PlayerInfo | None = None) -> AccountView:
    view: AccountView = {
        "id": account.name.lower(),
        "username": account.name,
        "createdAt": int(account.created_at.timestamp() * 1000),
    }
    if account.bot:
        view["title"] = BOT_TITLE
    if info is not None:
        perfs: dict[str, PerfView] = {}
        for key, rating in info.ratings.items():
            name = ".".join(key) if isinstance(key, tuple) else key
            perfs[name] = {"rating": round(rating.rating), "prov": rating.provisional}
        view["perfs"] = perfs
    return view


@routes.get("/api/account")
async def account(request: web.Request) -> web.Response:
    who: Caller = await caller(request)
    return web.json_response(account_view(who.account, who.info))


@routes.post("/api/bot/account/upgrade")
async def upgrade(request: web.Request) -> web.Response:
    """Make the caller's account a bot account (once; it cannot be undone)."""
    who = await caller(request)
    if who.account.bot:
        api_error(400, "This account is already a bot account.")
    context = request.app[CONTEXT]
    made = await store_call(context.store.make_bot(who.account.id))
    context.callers.forget_account(who.account.id)  # the next request sees the bot flag
    if not made:
        api_error(400, "This account is already a bot account.")
    return web.json_response(OK)


@routes.get("/api/user/{name}")
async def user(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if not 0 < len(name) <= 64:
        api_error(404, "No such user")
    store = request.app[CONTEXT].store
    found = await store_call(store.player_by_name(name))
    if found is None:
        api_error(404, "No such user")
    info = await request.app[CONTEXT].accounts.player_info(found)
    view = account_view(found, info)
    links = request.app[CONTEXT].links
    view["online"] = any(link.info.id == info.id for link in links.online())
    return web.json_response(view)

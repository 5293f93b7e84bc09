"""Personal API tokens: ``POST /api/token`` (create: shown once), ``GET /api/token`` (list),
``DELETE /api/token/{id}`` (revoke one), ``DELETE /api/token`` (revoke the one used); and
``GET /api/token/page``, a small page to do it from a browser (which posts the name and password
to ``POST /api/token``, ``/api/token/list`` and ``/api/token/{id}/revoke``).

Creating or listing needs the player's session token (``Authorization: Bearer``, as the web
client holds it) or the name and password in the form; an API token cannot make more tokens.
A name and password are checked as a login is (:meth:`Accounts.authenticate`: throttled per
account and per address, failures logged), without starting a session; a throttled attempt is
answered 429 with ``Retry-After``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from aiohttp import web

from server.hub.errors import ErrorCode, ProtocolError
from server.hub.user_text import check_user_text
from server.transport.accounts import AuthError, StoredPlayer
from server.transport.headers import page_policy
from server.transport.http_api.auth import API_TOKEN_PREFIX, bearer, store_call
from server.transport.http_api.context import CONTEXT, api_error, request_address
from server.transport.http_api.forms import read_form, whole_number

routes = web.RouteTableDef()

PAGE = (Path(__file__).parent / "token_page.html").read_bytes()
PAGE_POLICY = page_policy(PAGE)
"""The token page's inline script and style may run (by their hashes); nothing else inline."""
MAX_DESCRIPTION = 100


async def _owner(request: web.Request, form: dict[str, str]) -> StoredPlayer:
    """The account acting: by session token, or by name and password."""
    context = request.app[CONTEXT]
    token = bearer(request)
    if token is not None:
        if token.startswith(API_TOKEN_PREFIX):
            api_error(403, "An API token cannot manage tokens: use your login session or password.")
        account = await store_call(context.accounts.session_account(token))
        if account is None:
            api_error(401, "No such session")
        return account
    name, password = form.get("name", ""), form.get("password", "")
    if not name or not password:
        api_error(401, "Log in: a session token (Authorization: Bearer) or name and password.")
    try:
        return await context.accounts.authenticate(name, password, request_address(request))
    except AuthError as error:
        if error.code == ErrorCode.TOO_MANY_ATTEMPTS:
            api_error(429, error.message, {"Retry-After": str(error.retry_after_s or 1)})
        api_error(503 if error.code == ErrorCode.UNAVAILABLE else 401, error.message)


class TokenListing(TypedDict):
    id: int
    description: str
    createdAt: int


def _listing(token: Any) -> TokenListing:
    return {
        "id": token.id,
        "description": token.description,
        "createdAt": int(token.created_at.timestamp() * 1000),
    }


@routes.post("/api/token")
async def create_token(request: web.Request) -> web.Response:
    form = await read_form(request)
    owner = await _owner(request, form)
    description = form.get("description", "").strip() or "API token"
    if len(description) > MAX_DESCRIPTION:
        api_error(400, f"description: at most {MAX_DESCRIPTION} characters")
    try:
        check_user_text(description, "description", MAX_DESCRIPTION)
    except ProtocolError as error:
        api_error(400, str(error))
    try:
        token, listed = await store_call(
            request.app[CONTEXT].store.create_api_token(owner.id, description)
        )
    except Exception as error:
        if type(error).__name__ == "TooManyTokensError":
            api_error(400, "Too many tokens: revoke one first.")
        if isinstance(error, ValueError):
            api_error(400, f"description: {error}")
        raise
    return web.json_response({"token": token, **_listing(listed)})


@routes.get("/api/token")
@routes.post("/api/token/list")
async def list_tokens(request: web.Request) -> web.Response:
    owner = await _owner(request, await read_form(request))
    tokens = await store_call(request.app[CONTEXT].store.api_tokens(owner.id))
    return web.json_response({"tokens": [_listing(token) for token in tokens]})


@routes.delete("/api/token/{id}")
@routes.post("/api/token/{id}/revoke")
async def revoke_token(request: web.Request) -> web.Response:
    owner = await _owner(request, await read_form(request))
    token_id = whole_number(request.match_info["id"], 12)
    if token_id is None:
        api_error(404, "No such token")
    context = request.app[CONTEXT]
    revoked = await store_call(context.store.revoke_api_token(owner.id, token_id))
    # The token's value is not known here (only its id): forget every cached token of the owner.
    context.callers.forget_account(owner.id)
    if not revoked:
        api_error(404, "No such token")
    return web.json_response({"ok": True})


@routes.delete("/api/token")
async def revoke_this_token(request: web.Request) -> web.Response:
    """lichess's ``DELETE /api/token``: the API token of the request revokes itself."""
    token = bearer(request)
    if token is None or not token.startswith(API_TOKEN_PREFIX):
        api_error(401, "No such token")
    context = request.app[CONTEXT]
    revoked = await store_call(context.store.revoke_api_token_value(token))
    context.callers.forget_token(token)
    if not revoked:
        api_error(401, "No such token")
    return web.Response(status=204)


@routes.get("/api/token/page")
async def token_page(request: web.Request) -> web.Response:
    return web.Response(
        body=PAGE,
        content_type="text/html",
        charset="utf-8",
        headers={"Content-Security-Policy": PAGE_POLICY},
    )

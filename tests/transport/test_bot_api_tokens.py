"""Personal API tokens over HTTP: created with the password or the login session, shown once,
stored hashed, listed, revoked (then refused at once); the token page is served; who a token
is stays cached a few seconds in a process, never past a revocation made through it."""

from __future__ import annotations

import hashlib

import aiohttp
from bot_support import base_url
from sqlalchemy import delete, select
from ws_support import OpenClient, StartApp

from server.store.schema import api_tokens
from server.transport.http_api.callers import CallerCache


async def test_tokens_are_created_listed_revoked_and_stored_hashed(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    client = await open_client(app, "alice")
    await client.register("alice")
    url = base_url(app)
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{url}/api/token", data={"name": "alice", "password": "wrong pass"}
        ) as bad:
            assert bad.status == 401 and "error" in await bad.json()
        async with http.post(
            f"{url}/api/token",
            data={"name": "alice", "password": "correct horse", "description": "engine"},
        ) as made:
            first = await made.json()
        assert made.status == 200 and first["token"].startswith("vhb_")
        session = {"Authorization": f"Bearer {client.token}"}
        async with http.post(
            f"{url}/api/token", json={"description": "second"}, headers=session
        ) as made:
            second = await made.json()
        async with http.get(f"{url}/api/token", headers=session) as listed:
            tokens = (await listed.json())["tokens"]
        assert [t["description"] for t in tokens] == ["engine", "second"]
        assert all("token" not in t for t in tokens)  # shown once, never again
        # An API token works, but cannot make more tokens.
        bearer = {"Authorization": f"Bearer {first['token']}"}
        async with http.get(f"{url}/api/account", headers=bearer) as account:
            assert (await account.json())["username"] == "alice"
        async with http.post(f"{url}/api/token", headers=bearer) as refused:
            assert refused.status == 403
        async with http.delete(f"{url}/api/token/{first['id']}", headers=session) as revoked:
            assert revoked.status == 200
        async with http.get(f"{url}/api/account", headers=bearer) as gone:
            assert gone.status == 401 and (await gone.json()) == {"error": "No such token"}
        async with http.get(f"{url}/api/token/page") as page:
            assert page.status == 200 and "API tokens" in await page.text()
    async with app.store.engine.connect() as connection:
        stored = (await connection.execute(select(api_tokens.c.token_hash))).scalars().all()
    assert stored == [hashlib.sha256(second["token"].encode()).hexdigest()]


async def test_a_resolved_token_is_cached_and_a_revoked_one_refused_at_once(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """Per-process caching of who a token is (server/transport/http_api/callers.py): the second
    request does not ask the database; a token revoked through this process is refused at the
    very next request (by id or by itself); one deleted behind its back (as another hub
    revokes it) is refused once the cache's TTL has passed (its clock is stepped here)."""
    app = await start_app()
    client = await open_client(app, "alice")
    await client.register("alice")
    cache = app.api.context.callers
    now = [1000.0]
    cache._clock = lambda: now[0]  # a clock the test steps instead of sleeping through the TTL
    lookups: list[str] = []
    real_lookup = app.store.api_token_player

    async def counted(token: str) -> object:  # the real store, its calls counted
        lookups.append(token)
        return await real_lookup(token)

    app.store.api_token_player = counted
    url = base_url(app)
    session = {"Authorization": f"Bearer {client.token}"}

    async def token() -> dict[str, str]:
        async with http.post(f"{url}/api/token", headers=session) as made:
            assert made.status == 200
            return dict(await made.json())

    def bearer(made: dict[str, str]) -> dict[str, str]:
        return {"Authorization": f"Bearer {made['token']}"}

    async def status(made: dict[str, str]) -> int:
        async with http.get(f"{url}/api/account", headers=bearer(made)) as answer:
            return answer.status

    async with aiohttp.ClientSession() as http:
        by_id, itself, behind = await token(), await token(), await token()
        assert [await status(by_id), await status(by_id), await status(by_id)] == [200] * 3
        assert lookups == [by_id["token"]]  # asked the database once, then the cache
        async with http.delete(f"{url}/api/token/{by_id['id']}", headers=session) as revoked:
            assert revoked.status == 200
        assert await status(by_id) == 401  # at once, within the TTL

        assert await status(itself) == 200
        async with http.delete(f"{url}/api/token", headers=bearer(itself)) as revoked:
            assert revoked.status == 204
        assert await status(itself) == 401

        assert await status(behind) == 200
        async with app.store.engine.begin() as connection:
            await connection.execute(delete(api_tokens).where(api_tokens.c.id == behind["id"]))
        assert await status(behind) == 200  # cached: another hub's revocation is not seen yet
        now[0] += cache.ttl_s
        assert await status(behind) == 401  # the TTL has passed: asked again, refused


def test_the_cache_is_bounded_and_forgets_by_account() -> None:
    now = [0.0]
    cache = CallerCache(ttl_s=5.0, max_entries=3, clock=lambda: now[0])
    for number in range(5):
        cache.put(f"t{number}", number % 2, number)
    assert len(cache) == 3 and cache.get("t0") is None and cache.get("t4") == 4
    cache.forget_account(0)  # t2 and t4
    assert [cache.get(t) for t in ("t2", "t3", "t4")] == [None, 3, None]
    now[0] = 5.0
    assert cache.get("t3") is None and len(cache) == 0

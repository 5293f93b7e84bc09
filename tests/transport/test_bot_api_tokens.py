"""Personal API tokens over HTTP: created with the password or the login session, shown once,
stored hashed, listed, revoked (then refused at once); the token page is served."""

from __future__ import annotations

import hashlib

import aiohttp
from bot_support import base_url
from sqlalchemy import select
from ws_support import OpenClient, StartApp

from server.store.schema import api_tokens


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

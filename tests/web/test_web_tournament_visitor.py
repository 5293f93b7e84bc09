"""A visitor (not logged in) reading a tournament's page: the server closes a connection that
does not log in within ``login_timeout_s`` (here 1 s); the page reconnects, watches again and
keeps showing the changes pushed after it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect
from seats import WAIT_MS
from ws_support import Client

from server.app import App


@pytest.fixture
def hub_settings() -> dict[str, Any]:
    return {"login_timeout_s": 1.0}


async def test_a_visitor_keeps_watching_across_the_login_timeout(hub: App, open_page) -> None:  # type: ignore[no-untyped-def]
    alice = await Client.open(hub.url, "alice")
    bob = await Client.open(hub.url, "bob")
    try:
        for client, name in ((alice, "alice"), (bob, "bob")):
            assert (await client.register(name))["t"] == "welcome"
        tc = {"kind": "fischer", "base_s": 120, "inc_s": 0}
        terms = {"format": "arena", "variant": "minishogi", "tc": tc, "start_when_joined": 3, "duration_s": 600}
        answer = await alice.ok("tournament_create", {"name": "Open cup", **terms})
        tid = answer["tournament"]
        await alice.ok("tournament_join", {"id": tid})
        page = await open_page("visitor", f"/tournament/{tid}")
        await expect(page.locator('table.standings tr[data-player="alice"]')).to_be_visible()
        # The server closes the visitor's socket after 1 s; the page opens another and watches.
        await page.wait_for_event("websocket", timeout=WAIT_MS)
        await expect(page.locator("#status")).to_have_text("Connected", timeout=WAIT_MS)
        await bob.ok("tournament_join", {"id": tid})
        await expect(page.locator('table.standings tr[data-player="bob"]')).to_be_visible()
    finally:
        await alice.close()
        await bob.close()

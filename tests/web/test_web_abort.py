"""A game aborted by the server because a player made no first move in time says who (on
both pages, and after a reload), with no "*" score and nothing to analyse."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest_asyncio
from playwright.async_api import expect
from seats import WAIT_MS, start_game, two_players
from ws_support import settings_for

from server.app import App, hub_config

# The test waits this window out twice. Alice's first move below lands within 0.2-0.7 s of the
# game's start even on a loaded machine, so 5 s leaves her several seconds.
FIRST_MOVE_WINDOW_MS = 5000


@pytest_asyncio.fixture(loop_scope="session")
async def hub(tmp_path: Path) -> AsyncIterator[App]:
    settings = settings_for(f"sqlite+aiosqlite:///{tmp_path / 'hub.sqlite3'}")
    config = hub_config(settings)
    config = replace(config, room=replace(config.room, first_move_window_ms=FIRST_MOVE_WINDOW_MS))
    app = App(settings, config=config, rng=random.Random(13))
    await app.start()
    yield app
    await app.stop()


async def test_a_game_without_a_first_move_is_aborted_and_says_whose(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    await alice.page.click("details.settings summary")  # sound on: the warning is heard
    await alice.page.check("#set-sound")
    await alice.page.click("details.settings summary")
    await start_game(alice, bob, "minishogi")           # alice is sente, and does not move
    # The countdown from the server's window (5 s here, not an assumed 30), then the warning.
    countdown = alice.page.locator(".clock.bottom .first-move")
    await expect(countdown).to_contain_text("seconds to make your first move")
    assert int(await countdown.get_attribute("data-seconds") or 99) <= FIRST_MOVE_WINDOW_MS // 1000
    await expect(bob.page.locator(".clock.top .first-move")).to_contain_text("to make the first move")
    await expect(alice.page.locator(".clock.bottom .first-move.urgent")).to_be_visible()
    await expect(alice.page.locator("html")).to_have_attribute("data-last-sound", "countdown")
    await shots(alice.page, "first-move-countdown", full_page=False)
    for seat in (alice, bob):
        await seat.wait_end("Game aborted: alice made no first move in time")
        await expect(seat.page.locator(".banner")).not_to_contain_text("*")
        await expect(seat.page.locator(".analysis")).to_be_hidden()
    await bob.page.reload()                              # the snapshot says why too
    await bob.wait_end("Game aborted: alice made no first move in time")

    await alice.page.click('nav a[href="/"]')
    await bob.page.click('nav a[href="/"]')
    await bob.page.wait_for_selector("form.seek-form", timeout=WAIT_MS)
    await start_game(alice, bob, "minishogi")
    await alice.drag_move("e1", "e4")                    # alice moves; bob does not
    await bob.wait_ply(1)
    await expect(bob.page.locator(".clock.bottom .first-move")).to_contain_text("seconds to make your first move")
    await expect(alice.page.locator(".clock.bottom .first-move")).to_have_count(0)
    for seat in (alice, bob):
        await seat.wait_end("Game aborted: bob made no first move in time")

"""Time pressure: the tab's title says "Your turn" with the clock on the player's move; under
byoyomi the main time turns red under ten seconds though periods follow, and the low-time
warning sound is asked for."""

from __future__ import annotations

import re

from playwright.async_api import expect
from seats import start_game, two_players

from server.app import App


async def test_your_turn_title_red_main_time_and_low_time_sound(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    await start_game(alice, bob, "minishogi", kind="byoyomi", main_min=0, main_sec=15, period=10, periods=1)
    your_turn = re.compile(r"^Your turn · 0:15 · Variant Hub$")
    await expect(alice.page).to_have_title(your_turn)
    await expect(bob.page).to_have_title("Variant Hub")
    await alice.drag_move("e1", "e4")
    await expect(bob.page).to_have_title(your_turn)
    await expect(alice.page).to_have_title("Variant Hub")
    await bob.click_move("d5", "e4")
    await expect(alice.page).to_have_title(re.compile(r"^Your turn · 0:\d\d"))
    # Alice's main time runs down: red under ten seconds while still in main time (periods follow).
    await expect(alice.page.locator(".clock.bottom .time.running.low small")).to_contain_text("+ 1×10s")
    await expect(alice.page.locator("html")).to_have_attribute("data-last-sound", "low")
    await shots(alice.page, "byoyomi-low")

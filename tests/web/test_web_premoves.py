"""Conditional premoves on the game page of a correspondence game: the player types a line, sees
it stored, and sees the reply played on the board when the opponent (here a websocket client)
moves; the list empties when the line is used up. Screenshot: docs/screenshots/premoves.png."""

from __future__ import annotations

from playwright.async_api import expect
from seats import WAIT_MS, Seat
from ws_support import Client

from server.app import App


async def test_a_conditional_line_answers_the_opponent(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice = Seat(await open_page("alice"), "alice")
    await alice.register()
    bob = await Client.open(hub.url, "bob")
    try:
        await bob.register("bob")
        tc = {"kind": "correspondence", "days": 3}
        await bob.ok("seek", {"variant": "minishogi", "tc": tc, "colour": "first"})
        game_id = await alice.accept_seek_of("bob")  # alice plays second: bob is to move
        page = alice.page
        panel = page.locator("section.premoves")
        await expect(panel).to_be_visible(timeout=WAIT_MS)
        await expect(panel.locator("li.empty")).to_have_text("No conditional lines.")

        await panel.locator("input[name=premove-line]").fill("a1b2 zz")  # refused: nothing stored
        await panel.locator("button[data-action=premoves-add]").click()
        await expect(panel.locator("p.premove-error")).to_contain_text("Line 1, move 2")
        await panel.locator("input[name=premove-line]").fill("a1b2 a5a2")
        await panel.locator("button[data-action=premoves-add]").click()
        await expect(panel.locator("li.premove-line")).to_have_text(["a1b2 a5a2"])
        await expect(panel.locator("p.premove-error")).to_have_text("")
        await shots(page, "premoves")

        await bob.ok("move", {"game": game_id, "ply": 1, "move": "a1b2"})
        reply = await bob.next(lambda m: m["t"] == "move" and m["d"]["ply"] == 2)
        assert reply["d"]["uci"] == "a5a2" and reply["d"]["side"] == "second"
        await alice.wait_ply(2)
        await expect(panel.locator("li.empty")).to_have_text("No conditional lines.")
        await expect(page.locator("ol.moves")).to_contain_text(reply["d"]["display"])
        await expect(panel.locator("input[name=premove-line]")).to_be_enabled()  # bob to move
    finally:
        await bob.close()

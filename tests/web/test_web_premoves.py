"""Conditional premoves on the game page of a correspondence game: a typed line refused with the
move named; a line made on the small board of the panel on a 360 px phone (the opponent's move,
the reply, one taken back and played again; the server answering each step's legal moves),
saved, and the reply played on the board when the opponent (here a websocket client) moves; the
list empties when the line is used up. Screenshots: docs/screenshots/premoves.png,
premoves-board-phone.png."""

from __future__ import annotations

from playwright.async_api import Locator, expect
from seats import WAIT_MS, Seat
from ws_support import Client

from server.app import App

PHONE = {"width": 360, "height": 740}


async def line_move(builder: Locator, origin: str, target: str) -> None:
    """Play ``origin``→``target`` on the line's board; wait for the server's next position."""
    before = await builder.get_attribute("data-moves") or ""
    await expect(builder).to_have_attribute("data-busy", "false")
    await builder.locator(f'svg.board rect[data-square="{origin}"]').click()
    await builder.locator(f'svg.board [data-target="{target}"]').wait_for(timeout=WAIT_MS)
    await builder.locator(f'svg.board rect[data-square="{target}"]').click()
    moves = f"{before} {origin}{target}".strip()
    await expect(builder).to_have_attribute("data-moves", moves)
    await expect(builder).to_have_attribute("data-busy", "false")


async def test_a_line_made_on_the_board_answers_the_opponent(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
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

        await page.set_viewport_size(PHONE)
        await panel.locator("button[data-action=premove-board]").click()
        builder = panel.locator(".premove-builder")
        await expect(builder).to_have_attribute("data-moves", "")
        await expect(builder.locator(".premove-hint")).to_have_text("Play a move your opponent might make.")
        await expect(panel.locator("p.premove-error")).to_have_text("")
        await line_move(builder, "a1", "b2")  # bob's move
        await expect(builder.locator(".premove-hint")).to_have_text("Play your reply.")
        save = builder.locator("button[data-action=premove-save]")
        await expect(save).to_be_disabled()  # a line ends with a reply
        await line_move(builder, "a5", "a3")  # a reply…
        await builder.locator("button[data-action=premove-undo]").click()  # …taken back
        await expect(builder).to_have_attribute("data-moves", "a1b2")
        await line_move(builder, "a5", "a2")
        await expect(builder.locator("li.mine")).to_have_count(1)
        await expect(save).to_be_enabled()

        # The phone: the small board and its buttons fit, nothing scrolls sideways.
        await builder.scroll_into_view_if_needed()
        fit = await page.evaluate(
            """() => { const b = document.querySelector('.premove-builder').getBoundingClientRect();
              const s = document.querySelector('.premove-builder svg.board').getBoundingClientRect();
              return { scroll: document.documentElement.scrollWidth, width: innerWidth,
                       left: Math.min(b.left, s.left), right: Math.max(b.right, s.right), board: s.width }; }"""
        )
        assert fit["scroll"] <= fit["width"] and fit["left"] >= 0 and fit["right"] <= 360, fit
        assert fit["board"] >= 200, fit  # a board one can play on
        await shots(page, "premoves-board-phone", full_page=False)

        await save.click()
        await expect(panel.locator("li.premove-line")).to_have_text(["a1b2 a5a2"])
        await expect(builder).to_have_attribute("data-moves", "")  # ready for another line
        await expect(panel.locator("p.premove-error")).to_have_text("")
        await builder.locator("button[data-action=premove-close]").click()
        await expect(builder).to_have_count(0)
        await page.set_viewport_size({"width": 1280, "height": 900})
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

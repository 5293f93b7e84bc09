"""The piece tooltip: shown after a pause over a piece, its diagram turned for a piece moving
down the screen; never over the move dots while a move is being made, gone when a drag starts
and after the move (never stale), and off with Settings → Piece tooltips."""

from __future__ import annotations

from playwright.async_api import expect
from seats import start_game, two_players

from server.app import App


async def test_tooltip_timing_orientation_and_setting(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    await start_game(alice, bob, "minishogi")
    page = alice.page
    tip = page.locator(".piece-tip")
    board = page.locator(".board-wrap")
    await alice.square("e4").hover()                      # bob's pawn, moving down alice's screen
    await expect(tip).to_be_visible()
    await expect(tip).to_contain_text("Pawn")
    await expect(tip.locator("svg.diagram")).to_have_attribute("data-turned", "true")
    await shots(page, "tooltip-turned")
    await alice.square("a1").hover()                      # alice's own king points up
    await expect(tip).to_contain_text("King")
    await expect(tip.locator("svg.diagram")).to_have_attribute("data-turned", "false")

    await alice.square("e1").click()                      # a move begins: no tooltip over the dots
    await expect(tip).to_be_hidden()
    await page.wait_for_selector('svg.board [data-target="e4"]')
    await alice.square("e4").hover()
    await expect(board).to_have_attribute("data-hover", "e4")
    await expect(tip).to_be_hidden()
    await alice.square("e4").click()                      # Rx: the pawn's tooltip does not linger
    await bob.wait_ply(1)
    await alice.wait_ply(1)
    await expect(tip).to_be_hidden()
    await alice.square("d4").hover()
    await alice.square("e4").hover()
    await expect(tip).to_contain_text("Rook")             # what stands there now

    # Bob: the tooltip goes when he starts dragging, and is not back after the drop.
    bob_tip = bob.page.locator(".piece-tip")
    await bob.square("d5").hover()
    await expect(bob_tip).to_contain_text("Gold")
    await bob.drag_move("d5", "e4")
    await alice.wait_ply(2)
    await expect(bob_tip).to_be_hidden()

    # Turned off: not even Alt (which shows it at once when on) brings it.
    await page.click(".settings summary")
    await page.uncheck("#set-tooltips")
    await page.click(".settings summary")
    await page.keyboard.down("Alt")
    await alice.square("a1").hover()
    await expect(board).to_have_attribute("data-hover", "a1")
    await expect(tip).to_be_hidden()
    await page.keyboard.up("Alt")

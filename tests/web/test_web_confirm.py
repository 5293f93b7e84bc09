"""Nothing is lost to a stray tap: resign and abort ask for a confirmation (the button turns
into "Cancel" where the finger was and the confirm beside it), and Settings → Confirm moves
holds a move, drawn as played, until "Confirm move"."""

from __future__ import annotations

from playwright.async_api import expect
from seats import start_game, two_players

from server.app import App


async def test_resign_and_abort_ask_first_and_moves_can_wait_for_a_confirmation(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    await start_game(alice, bob, "minishogi")
    page = alice.page
    await page.click('button[data-action="abort"]')
    await expect(page.locator('button[data-action="abort-confirm"]')).to_have_text("Yes, abort")
    await shots(page, "abort-confirm")
    await page.click('button[data-action="abort-cancel"]')   # a second tap on the same spot: nothing
    await expect(page.locator('button[data-action="abort"]')).to_be_visible()

    await page.click(".settings summary")
    await page.check("#set-confirm")
    await page.click(".settings summary")
    board = page.locator(".board-wrap")
    await alice.click_move("e1", "e4")
    await expect(board).to_have_attribute("data-pending", "e1e4")     # drawn, not sent
    await expect(page.locator('svg.board g.pc[data-square="e4"]')).to_have_attribute("data-piece", "R")
    await page.click('button[data-action="move-cancel"]')
    await expect(board).not_to_have_attribute("data-pending", "e1e4")
    await expect(page.locator('svg.board g.pc[data-square="e1"]')).to_have_attribute("data-piece", "R")
    await alice.click_move("e1", "e4")
    await shots(page, "move-confirm")
    await page.click('button[data-action="move-confirm"]')
    await bob.wait_ply(1)
    await bob.click_move("d5", "e4")
    await alice.wait_ply(2)

    await page.click('button[data-action="resign"]')
    await expect(page.locator('button[data-action="resign-confirm"]')).to_have_text("Yes, resign")
    # Nothing was sent: a chat line sent after the tap reaches bob with the game still on.
    await page.fill(".chat-form input", "still playing")
    await page.press(".chat-form input", "Enter")
    await expect(bob.page.locator(".chat-lines")).to_contain_text("still playing")
    await expect(bob.page.locator(".banner")).to_be_hidden()
    await page.click('button[data-action="resign-confirm"]')   # within 8 s of the first tap
    for seat in (alice, bob):
        await seat.wait_end("bob wins by resignation")

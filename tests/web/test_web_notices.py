"""Words and notices: an abort says who aborted (and no "*" score); a challenge received away
from the lobby is a notice with Accept and Decline that says which side you get; a withdrawn
challenge is announced to its recipient."""

from __future__ import annotations

from playwright.async_api import expect
from seats import WAIT_MS, start_game, two_players

from server.app import App


async def test_abort_reason_and_challenge_notices(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    await start_game(alice, bob, "spartan")
    await alice.action("abort")
    for seat in (alice, bob):
        await seat.wait_end("Game aborted by alice")
        await expect(seat.page.locator(".banner")).not_to_contain_text("*")
    await bob.page.reload()                     # the snapshot says why too
    await bob.wait_end("Game aborted by alice")

    # Alice challenges bob from the lobby while bob is still on the game page.
    await alice.page.click('nav a[href="/"]')
    form = "form.seek-form"
    await alice.page.select_option(f"{form} select[name=variant]", "spartan")
    await alice.page.select_option(f"{form} select[name=colour]", "first")
    await alice.page.fill(f"{form} input[name=opponent]", "bob")
    await alice.page.click(f"{form} button[name=challenge]")
    await expect(alice.page.locator(".challenge")).to_contain_text("You challenge bob: Spartan Chess")
    await expect(alice.page.locator(".challenge")).to_contain_text("you play the Persians (White)")
    notice = bob.page.locator(".notice.challenge")
    await expect(notice).to_contain_text("alice challenges you: Spartan Chess")
    await expect(notice).to_contain_text("you play the Spartans (Black)")
    await expect(notice.locator("button.accept")).to_be_visible()
    await expect(notice.locator("button.decline")).to_be_visible()
    await shots(bob.page, "challenge-notice")
    await alice.page.locator(".challenge button.withdraw").click(timeout=WAIT_MS)
    await expect(bob.page.locator(".notice")).to_contain_text("alice withdrew the challenge")
    await expect(notice).to_have_count(0)

    await alice.page.click(f"{form} button[name=challenge]")
    await notice.locator("button.accept").click(timeout=WAIT_MS)
    await bob.page.wait_for_selector(".board-wrap[data-ply='0']", timeout=WAIT_MS)
    await expect(bob.page.locator(".game-info")).to_contain_text("you play the Spartans (Black)")
    await expect(alice.page.locator(".game-info")).to_contain_text("you play the Persians (White)")
    await expect(bob.page.locator(".banner")).to_be_hidden()

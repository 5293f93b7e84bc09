"""The lobby's direct challenges (decline with a reason, accept) and a rated game won by an
abandonment claim, with the rating change in the end banner."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect
from seats import WAIT_MS, api_json, two_players

from server.app import App


@pytest.fixture
def hub_settings() -> dict[str, Any]:
    return {"reconnect_grace_s": 1.0}  # the abandonment countdown's floor: claimable at once


async def test_challenge_decline_accept_and_abandonment_claim(hub: App, open_page) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    form = "form.seek-form"
    await alice.page.select_option(f"{form} select[name=variant]", "spartan")
    await alice.page.fill(f"{form} input[name=base_min]", "0")
    await alice.page.fill(f"{form} input[name=base_sec]", "15")
    await alice.page.fill(f"{form} input[name=inc]", "0")
    await alice.page.check(f"{form} input[name=rated]")
    await alice.page.select_option(f"{form} select[name=colour]", "first")
    await alice.page.fill(f"{form} input[name=opponent]", "BOB")
    await alice.page.click(f"{form} button[name=challenge]")
    await expect(alice.page.locator(".challenge")).to_contain_text("You challenge bob")
    challenge = bob.page.locator(".challenge", has_text="alice challenges you")
    await challenge.locator("input").fill("after lunch")
    await challenge.locator("button.decline").click(timeout=WAIT_MS)
    await expect(alice.page.locator(".lobby .error", has_text="declined")).to_contain_text("alice → bob declined: after lunch")
    await expect(bob.page.locator(".challenge")).to_have_count(0)

    # The second challenge from the "Online now" panel (the server's `who` list): bob is there
    # though he neither seeks nor plays; the form's terms go with it.
    online = alice.page.locator('ul.players li[data-player="bob"]')
    await expect(online).to_contain_text("online", timeout=WAIT_MS)
    await online.locator("button.challenge-player").click(timeout=WAIT_MS)
    await bob.page.locator(".challenge button.accept").click(timeout=WAIT_MS)
    for seat in (alice, bob):
        await seat.page.wait_for_selector("section.game .board-wrap", timeout=WAIT_MS)
    game_id = await alice.page.locator("section.game").get_attribute("data-game")
    await alice.click_move("e2", "e4")
    await bob.click_move("d7", "e6")
    await alice.wait_ply(2)
    await bob.page.context.close()              # bob is gone: alice may claim when it is claimable
    await alice.page.click('button[data-action="abandon_claim-win"]', timeout=WAIT_MS)
    await alice.wait_end("alice wins by abandonment")
    await expect(alice.page.locator(".banner .rating-change")).to_have_count(2)
    record = await api_json(hub, f"/api/games/{game_id}")
    assert record["rated"] is True and record["termination"] == "abandonment"
    assert record["first"]["rating_after"] > record["first"]["rating_before"]
    # The profile, reached from the player's name: the new rating and the game.
    await alice.page.click(".clock.bottom a.name")
    await expect(alice.page.locator("table.ratings")).to_contain_text(f"Spartan Chess · {record['speed']}")
    await expect(alice.page.locator("table.ratings")).to_contain_text(str(record["first"]["rating_after"]))
    await expect(alice.page.locator(f'table.games tr[data-game="{game_id}"]')).to_contain_text("abandonment")

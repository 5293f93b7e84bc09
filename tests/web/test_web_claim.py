"""Claim draw appears only when the server says a claim is available: not in an ordinary
position, and on the third occurrence of a position for the player to move."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.async_api import expect
from seats import WAIT_MS, api_json, on_screen, start_game, two_players

from server.app import App
from server.rules import Game, get_variant

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hub"))
from hub_harness import knight_cycle


async def test_claim_draw_only_when_the_server_says_so(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    game_id = await start_game(alice, bob, "spartan")
    start = (await api_json(hub, f"/api/games/{game_id}"))["start_fen"]
    cycle = knight_cycle(Game(get_variant("spartan"), start))
    claim = alice.page.locator('button[data-action="claim_draw"]')
    for ply, move in enumerate(cycle * 2, 1):
        seat, other = (alice, bob) if ply % 2 else (bob, alice)
        await seat.click_move(move[:2], move[2:4])
        await other.wait_ply(ply)
        if ply == 4:    # alice to move, the start position seen twice: nothing to claim
            await alice.wait_my_turn()
            await expect(alice.page.locator('button[data-action="draw_offer"]')).to_be_visible()
            await expect(claim).to_have_count(0)
    await alice.wait_my_turn()
    await expect(claim).to_be_visible(timeout=WAIT_MS)   # the third time: the claim is there
    await shots(alice.page, "claim-draw")
    # No "…" after the first player's last move (only a leading gap would show one).
    await bob.page.keyboard.press("ArrowLeft")
    await bob.wait_ply(len(cycle) * 2 - 1)
    await expect(bob.page.locator("ol.moves .mv-empty")).to_have_count(0)
    # Looking back keeps the claim while it holds.
    await alice.page.keyboard.press("Home")
    await alice.wait_ply(0)
    await expect(alice.page.locator(".history-note")).to_be_visible()
    await expect(claim).to_be_visible()
    await alice.page.set_viewport_size({"width": 1366, "height": 768})   # a chess board on a laptop
    await on_screen(alice.page, "Spartan Chess, looking back")
    await expect(claim).to_be_visible()
    await claim.click()
    for seat in (alice, bob):
        await seat.wait_end("Draw by repetition")

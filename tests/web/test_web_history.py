"""Looking back during a live game: the clocks stay live, a note says the board is not the
game's position with a way back, and the opponent's move brings the player back to the game
unless they asked to stay. After the end, a logged-in player replaying the game sees each
move's clock times (from the stored record), as a visitor does."""

from __future__ import annotations

from playwright.async_api import expect
from seats import SIZES, WAIT_MS, api_json, on_screen, start_game, two_players

from server.app import App


def clock_text(ms: int) -> str:
    s = ms // 1000
    return f"{s // 60}:{s % 60:02d}"


async def test_history_in_a_live_game_and_clocks_in_the_replay(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    game_id = await start_game(alice, bob, "minishogi")
    page = alice.page
    note = page.locator(".history-note")
    await alice.drag_move("e1", "e4")
    await bob.click_move("d5", "e4")
    await alice.wait_ply(2)                       # both have moved: alice's clock runs
    await expect(page.locator('.clock.bottom .time.running')).to_be_visible()
    await page.keyboard.press("Home")
    await alice.wait_ply(0)
    # Both clocks still show, alice's still running (it counts down while she looks back, not
    # the start position's 5:00 of a replay); the note says where she is.
    running = page.locator('.clock.bottom .time.running')
    await expect(running).to_be_visible()
    await expect(page.locator('.clock.top .time')).to_have_text("5:00")
    await expect(running).not_to_have_text("5:00")
    shown = await running.inner_text()
    await expect(running).not_to_have_text(shown)
    await expect(note).to_contain_text("Move 0 of 2")
    await shots(page, "history-live")
    # A board with both hands at every common size: the clocks and the controls on screen,
    # looking back moves neither (the note is beside the board, or under it on a phone).
    for size, (width, height) in SIZES.items():
        await page.set_viewport_size({"width": width, "height": height})
        back = await on_screen(page, f"Mini-Shogi, {size}, looking back")
        await page.keyboard.press("End")
        await alice.wait_ply(2)
        live = await on_screen(page, f"Mini-Shogi, {size}")
        assert back["board"] == live["board"], (size, back["board"], live["board"])
        await shots(page, f"minishogi-{size}", full_page=False)
        await page.keyboard.press("Home")
        await alice.wait_ply(0)
    await page.set_viewport_size({"width": 1280, "height": 900})
    await page.click('button[data-action="back-to-game"]')
    await alice.wait_ply(2)
    await expect(note).to_be_hidden()
    await alice.drop("P", "d4")
    await alice.wait_ply(3)

    await page.keyboard.press("ArrowLeft")
    await page.keyboard.press("ArrowLeft")
    await alice.wait_ply(1)
    await bob.drop("R", "a3")                     # the opponent's move: back to the game
    await alice.wait_ply(4)
    await expect(note).to_be_hidden()
    await alice.click_move("d1", "a4")
    await page.keyboard.press("Home")
    await alice.wait_ply(0)
    await note.locator("input[name=stay]").check()   # unless the player asked to stay
    await bob.click_move("a3", "b3")
    await expect(page.locator("ol.moves li")).to_have_count(6)
    await expect(page.locator(".board-wrap")).to_have_attribute("data-ply", "0")
    await expect(note).to_contain_text("Move 0 of 6")
    await page.click('button[data-action="back-to-game"]')
    await alice.wait_ply(6)

    await bob.action("resign")
    await alice.wait_end("alice wins by resignation")
    record = await api_json(hub, f"/api/games/{game_id}")
    moves = record["moves"]
    await page.goto(f"http://127.0.0.1:{hub.port}/game/{game_id}#3")   # a logged-in player's replay
    await alice.wait_ply(3)
    await expect(page.locator('.clock.bottom .time')).to_have_text(clock_text(moves[2]["clock_ms"]), timeout=WAIT_MS)
    await expect(page.locator('.clock.top .time')).to_have_text(clock_text(moves[1]["clock_ms"]))
    await page.keyboard.press("ArrowRight")
    await alice.wait_ply(4)
    await expect(page.locator('.clock.top .time')).to_have_text(clock_text(moves[3]["clock_ms"]))

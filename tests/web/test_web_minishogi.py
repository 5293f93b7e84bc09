"""Mini-Shogi in the browser: lobby to end, a drop, a promotion choice, an observer who
reloads, and the finished game reviewed: stepped through and exported."""

from __future__ import annotations

from playwright.async_api import expect
from seats import WAIT_MS, Seat, api, api_json, two_players

from server.app import App


async def test_minishogi_from_the_lobby_to_the_review(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    await alice.seek("minishogi", kind="byoyomi", main_min=5, period=20, periods=3)
    seek = bob.page.locator("table.seeks tr", has_text="alice")
    await expect(seek).to_contain_text("5 min + 3×20s")      # minutes and byoyomi as players write them
    await shots(bob.page, "lobby")
    game_id = await bob.accept_seek_of("alice")
    await alice.page.wait_for_selector(f'section.game[data-game="{game_id}"] .board-wrap', timeout=WAIT_MS)
    # The board as each player sees it: sente's camp at the bottom for alice, flipped for bob.
    assert await alice.page.locator(".board-wrap").get_attribute("data-variant") == "minishogi"
    await expect(alice.page.locator(".clock.bottom .name")).to_contain_text("alice")
    await expect(bob.page.locator(".clock.bottom .name")).to_contain_text("bob")

    carol = Seat(await open_page("carol"), "carol")
    await carol.page.click("#guest")

    await alice.drag_move("e1", "e4")           # Rx1b, by drag and drop
    await bob.click_move("d5", "e4")            # Gx1b
    # Carol finds the game in the lobby's live list, with its move count, and watches it.
    live = carol.page.locator(f'ul.live-games li[data-game="{game_id}"]')
    await expect(live).to_contain_text("(2 plies)")
    await live.locator("a").click()
    await carol.page.wait_for_selector('.board-wrap[data-ply="2"]', timeout=WAIT_MS)
    await alice.drop("P", "d4")                 # a drop from the hand
    await bob.drop("R", "a3")
    await carol.wait_ply(4)
    await carol.page.reload()                   # the observer keeps the game on reload
    await carol.page.wait_for_selector('.board-wrap[data-ply="4"]', timeout=WAIT_MS)
    assert await carol.page.locator('button[data-action="resign"]').count() == 0
    await carol.page.fill(".chat-form input", "nice drop")   # the spectators' chat
    await carol.page.press(".chat-form input", "Enter")
    await expect(carol.page.locator(".chat h3")).to_have_text("Spectators' chat")
    await expect(carol.page.locator(".chat-lines")).to_contain_text(": nice drop")
    await alice.click_move("d1", "a4")
    await bob.click_move("a3", "b3")
    await alice.click_move("a4", "b5")
    await expect(alice.page.locator(".promo-dialog")).to_be_visible()
    await alice.promote("+")                    # the promotion choice
    await bob.wait_ply(7)
    await carol.wait_ply(7)
    # The promoted bishop is on b5, drawn red.
    await expect(alice.page.locator('svg.board g.pc[data-square="b5"]')).to_have_attribute("data-piece", "+B")
    await shots(alice.page, "minishogi")
    await bob.action("resign")
    for seat in (alice, bob, carol):
        await seat.wait_end("alice wins by resignation")

    # Review: the list, the replay board stepped with the keyboard, the exports.
    await alice.page.click('nav a[href="/review"]')
    await alice.page.wait_for_selector(f'table.games tr[data-game="{game_id}"]', timeout=WAIT_MS)
    await shots(alice.page, "review")
    await alice.page.click(f'a[data-open="{game_id}"]', timeout=WAIT_MS)
    await alice.page.wait_for_selector('.board-wrap[data-ply="7"]', timeout=WAIT_MS)
    await alice.page.keyboard.press("Home")
    await alice.wait_ply(0)
    for ply in (1, 2, 3):
        await alice.page.keyboard.press("ArrowRight")
        await alice.wait_ply(ply)
    assert alice.page.url.endswith(f"/game/{game_id}#3")
    await alice.page.reload()                   # the shareable URL names the ply
    await alice.wait_ply(3)
    await expect(alice.page.locator("ol.moves li.current")).to_have_text("P*2b")
    copy = alice.page.locator('button[data-action="copy-fen"]')
    await copy.click()
    sfen = (await api_json(hub, f"/api/games/{game_id}?ply=3"))["position"]["sfen"]
    await expect(copy).to_have_attribute("data-copied", sfen)
    for fmt in ("pgn", "kif"):
        async with alice.page.expect_download() as info:
            await alice.page.click(f'a[data-export="{fmt}"]')
        download = await info.value
        path = await download.path()
        assert path.read_bytes() == await api(hub, f"/api/games/{game_id}.{fmt}")
    assert (await api_json(hub, f"/api/games/{game_id}"))["termination"] == "resignation"

"""Every page on a 360 px phone: no horizontal scroll (the document's scrollWidth is measured on
each page: login, lobby with seeks, challenges and players, a live game with its buttons, a
finished game with a challenge notice over it, the game list, a profile, a replay), and Dai Shogi's zoom, whose squares are tap targets
of at least 40 px."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page, expect
from seats import SIZES, WAIT_MS, Seat, on_screen

from server.app import App

PHONE: dict[str, Any] = {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True}

MEASURE = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll("body *")]
    .filter((e) => e.getBoundingClientRect().right > width + 0.5 && e.getClientRects().length > 0)
    .slice(0, 6).map((e) => `${e.tagName.toLowerCase()}.${e.className?.baseVal ?? e.className}`);
  return { scroll: document.documentElement.scrollWidth, width, wide };
}"""


async def fits(page: Page, shots, name: str) -> None:  # type: ignore[no-untyped-def]
    """The page has no horizontal scroll; its screenshot is written."""
    measured = await page.evaluate(MEASURE)
    await shots(page, f"phone-{name}")
    assert measured["scroll"] <= 360, f"{name}: {measured['scroll']} px wide on a 360 px phone, overflowing: {measured['wide']}"


async def test_every_page_fits_a_360_px_phone_and_dai_shogi_zooms(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice = Seat(await open_page("alice", **PHONE), "alice")
    bob = Seat(await open_page("bob", **PHONE), "bob")
    await alice.page.wait_for_selector("#auth-form")
    await fits(alice.page, shots, "login")
    await alice.register()
    await bob.register()
    await alice.seek("daishogi", kind="byoyomi", main_min=30, period=30, periods=3)
    await expect(bob.page.locator("table.seeks tr", has_text="alice")).to_be_visible()
    # Sides in the variant's words, and a seek says which one its reader gets.
    await expect(alice.page.locator('form.seek-form select[name=colour] option[value="first"]')).to_have_text("Sente")
    await expect(bob.page.locator("table.seeks tr", has_text="alice")).to_contain_text("you play gote")
    await expect(alice.page.locator("table.seeks tr.mine")).to_contain_text("you play sente")
    # A challenge too, so the lobby shows one.
    await bob.page.fill("form.seek-form input[name=opponent]", "alice")
    await bob.page.click("form.seek-form button[name=challenge]")
    await expect(alice.page.locator(".challenge")).to_contain_text("bob challenges you")
    await expect(bob.page.locator('ul.players li[data-player="alice"]')).to_be_visible(timeout=WAIT_MS)
    # The level has its label; the lobby says a first move is due in time.
    await expect(bob.page.locator("form.seek-form label.level", has_text="Computer level").locator("select[name=level]")).to_be_visible()
    await expect(bob.page.locator("form.seek-form .first-move-help")).to_contain_text("no first move in time")
    await fits(bob.page, shots, "lobby")
    await fits(alice.page, shots, "lobby-challenged")
    await bob.page.locator(".challenge button.withdraw").click(timeout=WAIT_MS)
    game_id = await bob.accept_seek_of("alice")
    await alice.page.wait_for_selector(f'section.game[data-game="{game_id}"] .board-wrap', timeout=WAIT_MS)
    # The first-move countdown, from the server's figure: in the clock of the side to move.
    await expect(alice.page.locator(".clock.bottom .first-move")).to_contain_text("seconds to make your first move")
    await expect(bob.page.locator(".clock.top .first-move")).to_contain_text("seconds to make the first move")
    await expect(bob.page.locator(".clock.bottom .first-move")).to_have_count(0)
    await on_screen(alice.page, "Dai Shogi, first move due")
    await shots(alice.page, "phone-first-move", full_page=False)
    await alice.click_move("h5", "h6")
    await bob.wait_ply(1)
    await expect(bob.page.locator(".clock.bottom .first-move")).to_contain_text("seconds to make your first move")
    await expect(alice.page.locator(".clock.first-move, .clock.bottom .first-move")).to_have_count(0)
    await fits(bob.page, shots, "daishogi-live")
    live = await on_screen(bob.page, "Dai Shogi, live")
    await bob.page.keyboard.press("Home")           # looking back: no clock pushed, no board moved
    await bob.wait_ply(0)
    await expect(bob.page.locator(".history-note")).to_contain_text("Move 0 of 1")
    back = await on_screen(bob.page, "Dai Shogi, looking back")
    assert back["board"] == live["board"] and back["nav"]["bottom"] <= back["height"]
    await bob.page.click('button[data-action="back-to-game"]')
    await bob.wait_ply(1)

    # Zoom: squares big enough for a finger, the page still not wider than the phone.
    square = bob.square("h11")
    assert (await square.bounding_box() or {"width": 0})["width"] < 40
    await bob.page.click('button[data-action="zoom"]')
    await expect(bob.page.locator(".board-box")).to_have_class("board-box zoomed")
    box = await square.bounding_box()
    assert box is not None and box["width"] >= 40 and box["height"] >= 40, box
    await fits(bob.page, shots, "daishogi-zoomed")
    await bob.click_move("h11", "h10")             # played in the zoomed board
    await alice.wait_ply(2)
    await alice.click_move("h3", "h5")
    await bob.wait_ply(3)
    # The 15x15 board on a laptop and a desktop screen: both clocks and the controls shown,
    # looking back too.
    for size in ("laptop", "desktop"):
        width, height = SIZES[size]
        await alice.page.set_viewport_size({"width": width, "height": height})
        live = await on_screen(alice.page, f"Dai Shogi, {size}")
        await alice.page.keyboard.press("Home")
        await alice.wait_ply(0)
        back = await on_screen(alice.page, f"Dai Shogi, {size}, looking back")
        assert back["board"] == live["board"], (size, live["board"], back["board"])
        await shots(alice.page, f"daishogi-{size}", full_page=False)
        await alice.page.keyboard.press("End")
        await alice.wait_ply(3)
    await alice.page.set_viewport_size({"width": 360, "height": 740})
    await bob.action("resign")
    await alice.wait_end("alice wins by resignation")
    await fits(alice.page, shots, "daishogi-finished")
    # "1-0" on one line in the result banner.
    score = alice.page.locator(".banner .score")
    await expect(score).to_have_text(" 1-0")
    assert await score.evaluate("(e) => e.getClientRects().length") == 1
    # A challenge reaching bob on the game page: a notice that fits the phone too.
    await alice.page.click('nav a[href="/"]')
    await alice.page.fill("form.seek-form input[name=opponent]", "bob")
    await alice.page.click("form.seek-form button[name=challenge]")
    notice = bob.page.locator(".notice.challenge")
    await expect(notice.locator("button.decline")).to_be_visible()
    await fits(bob.page, shots, "challenge-notice")
    await notice.locator("button.decline").click()
    await expect(alice.page.locator(".challenge")).to_have_count(0)

    await alice.page.click('nav a[href="/review"]')
    await alice.page.wait_for_selector(f'table.games tr[data-game="{game_id}"]', timeout=WAIT_MS)
    await fits(alice.page, shots, "review")
    results = await alice.page.locator("form.filters select[name=result] option").all_inner_texts()
    assert results == ["any", "sente / White won", "gote / Black won", "draw"], results
    # The player filter ignores case, as names do everywhere else, and finds part of a name;
    # it is the page's address: a reload keeps it.
    player = alice.page.locator("form.filters input[name=player]")
    for typed, found in (("nobody", 0), ("BOB", 1), ("O", 1)):
        await player.fill(typed)
        await alice.page.click("form.filters button[type=submit]")
        await expect(alice.page.locator(f'table.games tr[data-game="{game_id}"]')).to_have_count(found)
    await expect(alice.page).to_have_url(f"http://127.0.0.1:{hub.port}/review?player=O")
    await alice.page.reload()
    await expect(player).to_have_value("O")
    await expect(alice.page.locator(f'table.games tr[data-game="{game_id}"]')).to_have_count(1)
    await alice.page.goto(f"http://127.0.0.1:{hub.port}/player/bob")
    await alice.page.wait_for_selector("table.games", timeout=WAIT_MS)
    await fits(alice.page, shots, "profile")
    await alice.page.goto(f"http://127.0.0.1:{hub.port}/game/{game_id}#2")
    await alice.wait_ply(2)
    await fits(alice.page, shots, "replay")

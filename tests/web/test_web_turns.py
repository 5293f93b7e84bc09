"""Correspondence on the page: the "your turn" list (/turns) and its count in the header,
moving after a reload, a 360 px phone, the e-mail settings form, and a browser notification
when it becomes the player's turn while the page is in another tab (web/src/mygames.ts)."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page, expect
from seats import WAIT_MS, Seat
from test_web_phone import PHONE, fits
from ws_support import Client

from server.app import App

# Records every Notification the page makes (the real one is still asked for permission), and
# lets the test put the page "in another tab": headless Chromium keeps every page visible, so
# `document.visibilityState` follows `window.__away` (with its `visibilitychange`).
RECORD_NOTIFICATIONS = """
(() => {
  const Real = window.Notification;
  window.__notes = [];
  class Recorded {
    constructor(title, options) { window.__notes.push({ title, body: options?.body, tag: options?.tag }); }
    close() {}
    static get permission() { return Real.permission; }
    static requestPermission() { return Real.requestPermission(); }
  }
  window.Notification = Recorded;
  window.__away = false;
  Object.defineProperty(Document.prototype, "visibilityState", { get: () => (window.__away ? "hidden" : "visible") });
  Object.defineProperty(Document.prototype, "hidden", { get: () => window.__away });
  window.goAway = () => { window.__away = true; document.dispatchEvent(new Event("visibilitychange")); };
})();
"""


async def _count(page: Page, text: str | None) -> None:
    """The header's count of games waiting for the player (None: not shown)."""
    badge = page.locator("#turn-count")
    if text is None:
        await expect(badge).to_be_hidden(timeout=WAIT_MS)
    else:
        await expect(badge).to_have_text(text, timeout=WAIT_MS)


async def test_your_turn_list_count_reload_phone_and_mail_form(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice = Seat(await open_page("alice"), "alice")
    bob = Seat(await open_page("bob", **PHONE), "bob")
    await alice.register()
    await bob.register()
    await alice.seek("minishogi", kind="correspondence", colour="first")
    await expect(bob.page.locator("table.seeks tr", has_text="alice")).to_contain_text("3 days per move")
    game_id = await bob.accept_seek_of("alice")
    await alice.page.wait_for_selector(f'section.game[data-game="{game_id}"] .board-wrap', timeout=WAIT_MS)
    await _count(alice.page, "1")  # her move: counted on every page
    await _count(bob.page, None)

    await alice.click_move("e1", "e4")
    await _count(bob.page, "1")
    await _count(alice.page, None)
    # Bob reloads the game's page (a correspondence game is played over days) and moves.
    await bob.page.reload()
    await bob.wait_ply(1)
    await bob.click_move("d5", "e4")
    await alice.wait_ply(2)
    await _count(alice.page, "1")
    await _count(bob.page, None)
    await fits(bob.page, shots, "correspondence-game")

    # The list, from the header's link; the game opens from it.
    await alice.page.click("#turns-link")
    row = alice.page.locator("ul.my-games.waiting li", has_text="Mini-Shogi against bob")
    await expect(row).to_contain_text("3 days per move · casual · you play sente · move 3")
    await shots(alice.page, "turns")
    await bob.page.click("#turns-link")
    await expect(bob.page.locator("ul.my-games.others li", has_text="against alice")).to_be_visible()
    await expect(bob.page.locator("ul.my-games.waiting")).to_contain_text("No game is waiting")
    await fits(bob.page, shots, "turns")
    await row.locator("a").click()
    await alice.page.wait_for_selector(f'section.game[data-game="{game_id}"] .board-wrap', timeout=WAIT_MS)
    await alice.wait_my_turn()

    # E-mail settings: the browser's own check refuses an address without a dot in its domain
    # (the server's rule, server/hub/mail_address.py) before anything is sent.
    await bob.page.click("#account summary")
    note = bob.page.locator("#mail-note")
    await expect(note).to_have_text("This server sends no mail at the moment.", timeout=WAIT_MS)
    form = bob.page.locator("#mail-form")
    await form.locator("input[name=email]").fill("bob@example")
    await form.locator("input[name=opt_in]").check()
    await form.locator("button[type=submit]").click()
    assert not await form.evaluate("(f) => f.checkValidity()")
    await form.locator("input[name=email]").fill("bob@example.org")
    await form.locator("button[type=submit]").click()
    await expect(note).to_have_text("Saved. This server sends no mail at the moment.", timeout=WAIT_MS)
    player = await hub.store.player_by_name("bob")
    assert player is not None
    settings = await hub.store.mail_settings(player.id)
    assert (settings.email, settings.opt_in) == ("bob@example.org", True)
    await fits(bob.page, shots, "mail-settings")


# One command over a websocket of the page's own session (as another tab of the player would
# send it); resolves with the answer, fails if the socket closes first (rather than leaving
# the test to its timeout).
PAGE_REQUEST = """async ([t, d]) => new Promise((resolve, reject) => {
  const ws = new WebSocket(`ws://${location.host}/ws`);
  ws.onopen = () => ws.send(JSON.stringify({ t: "resume", d: { token: localStorage.getItem("hub-token") }, a: 1 }));
  ws.onclose = (e) => reject(new Error(`${t}: the socket closed before the answer (${e.code} ${e.reason})`));
  ws.onmessage = (e) => { const m = JSON.parse(e.data);
    if (m.t === "hello") ws.send(JSON.stringify({ t, d, a: 2 }));
    if (m.a === 2) { resolve(m); ws.close(); } };
})"""
# Waiting on the page's own variables: a function, evaluated once. The page's CSP (script-src
# 'self', server/transport/headers.py) forbids eval, and Playwright evaluates an expression
# string again at each poll: it throws EvalError unless already true at its first check (as it
# did, under load, when the page handled the push after the test asked).
NOTIFIED = "() => window.__notes.length > 0"
BOB_WAIT_S = WAIT_MS / 1000


async def test_a_browser_notification_when_the_page_is_in_another_tab(hub: App, open_page) -> None:  # type: ignore[no-untyped-def]
    page = await open_page("alice", "/")
    await page.context.add_init_script(RECORD_NOTIFICATIONS)
    await Seat(page, "alice").register()
    bob = await Client.open(hub.url, "bob")
    try:
        await bob.register("bob")
        seek: dict[str, Any] = {"variant": "minishogi", "tc": {"kind": "correspondence", "days": 1}, "colour": "first"}
        sought = await bob.ok("seek", seek)
        await page.goto(f"http://127.0.0.1:{hub.port}/turns")
        button = page.locator(".notify-permission button[name=notify]")
        await expect(button).to_be_visible(timeout=WAIT_MS)
        await page.context.grant_permissions(["notifications"], origin=f"http://127.0.0.1:{hub.port}")
        await button.click()  # the permission is asked on the player's click
        await expect(page.locator(".notify-permission .notify-on")).to_be_visible(timeout=WAIT_MS)
        # The page is logged in (hello shows the header's link) before the game starts.
        await expect(page.locator("#turns-link")).to_be_visible(timeout=WAIT_MS)
        accepted = await page.evaluate(PAGE_REQUEST, ["play", {"id": sought["seek"]}])
        game = accepted["d"]["game"]
        start = await bob.next(lambda m: m["t"] == "game" and m["d"]["game"] == game, BOB_WAIT_S)

        async def bob_moves(ply: int, legal: list[str]) -> list[str]:
            await bob.ok("move", {"game": game, "ply": ply, "move": legal[0]})
            event = await bob.next(lambda m: m["t"] == "move" and m["d"]["ply"] == ply, BOB_WAIT_S)
            return list(event["d"]["legal"])

        # Her turn while the page is in view: the count says so, no notification.
        legal = await bob_moves(1, start["d"]["legal"])
        await expect(page.locator("#turn-count")).to_have_text("1", timeout=WAIT_MS)
        await page.evaluate(PAGE_REQUEST, ["move", {"game": game, "ply": 2, "move": legal[0]}])
        await expect(page.locator("#turn-count")).to_be_hidden(timeout=WAIT_MS)
        event = await bob.next(lambda m: m["t"] == "move" and m["d"]["ply"] == 2, BOB_WAIT_S)
        assert await page.evaluate("window.__notes") == []
        # The page goes to the background; bob moves: a notification.
        await page.evaluate("goAway()")
        await bob_moves(3, event["d"]["legal"])
        await page.wait_for_function(NOTIFIED, timeout=WAIT_MS)
        notes = await page.evaluate("window.__notes")
        assert notes == [{"title": "Your turn against bob", "body": "Mini-Shogi · move 4", "tag": f"turn-{game}"}]
        await expect(page.locator("#turn-count")).to_have_text("1", timeout=WAIT_MS)
    finally:
        await bob.close()

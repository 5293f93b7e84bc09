"""The tournament page's chat in Chromium (docs/web.md, tournamentchat.ts): a registered player
says a line (shown as text, the input cleared); another registered player, on a 360 px phone,
sees it appear (pushed) with nothing wider than the screen; a guest who opens the page later
reads it (the lines sent after the watch) and gets "Log in to chat" instead of the input; the
account's next line within the minute is refused (`rate_limited`, here one line a minute) and
the refusal shows under the input, what was typed kept."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Page, expect
from seats import WAIT_MS, Seat
from ws_support import Client

from server.app import App

_SCROLL = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
LINE = "good luck <b>all</b>"


@pytest.fixture
def hub_settings() -> dict[str, Any]:
    return {"tournament_chat_per_minute": 1}


async def to_tournament(page: Page, tid: str) -> None:
    """Go to the tournament's page within the client (the session kept)."""
    await page.evaluate(f"() => {{ history.pushState(null, '', '/tournament/{tid}'); dispatchEvent(new PopStateEvent('popstate')); }}")
    await expect(page.locator(f'section.tournament-page[data-tournament="{tid}"] h2')).to_have_text("Chat cup", timeout=WAIT_MS)


async def test_players_chat_on_the_tournament_page_and_a_guest_reads(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    host = await Client.open(hub.url, "host")
    try:
        assert (await host.register("host"))["t"] == "welcome"
        tc = {"kind": "fischer", "base_s": 120, "inc_s": 0}
        terms = {"format": "arena", "variant": "minishogi", "tc": tc, "start_when_joined": 3, "duration_s": 600}
        tid = (await host.ok("tournament_create", {"name": "Chat cup", **terms}))["tournament"]
    finally:
        await host.close()
    ann = Seat(await open_page("ann"), "ann")
    bob = Seat(
        await open_page("bob", viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True), "bob"
    )
    for seat in (ann, bob):
        await seat.register()
        await to_tournament(seat.page, tid)
    chat = ann.page.locator(".t-chat")
    await expect(chat.locator(".t-chat-login")).to_be_hidden()
    await chat.locator(".chat-form input").fill(LINE)
    assert await chat.locator(".chat-form input").get_attribute("maxlength") == "140"
    await chat.locator('button[data-action="t-chat-send"]').click()
    await expect(chat.locator(".chat-form input")).to_have_value("", timeout=WAIT_MS)  # the ack
    await expect(chat.locator(".chat-lines li")).to_have_text([f"ann: {LINE}"])
    # Pushed to the other watcher, as text (the only markup is the speaker's name).
    lines = bob.page.locator(".t-chat .chat-lines li")
    await expect(lines).to_have_text([f"ann: {LINE}"], timeout=WAIT_MS)
    await expect(lines.locator("b")).to_have_count(1)
    await expect(bob.page.locator(".t-chat .chat-form input")).to_be_visible()
    await shots(bob.page, "tournament-chat-phone")
    scroll, width = await bob.page.evaluate(_SCROLL)
    assert scroll <= width, f"{scroll} px wide in {width}"
    # A guest opening the page later: the last lines, no input.
    guest = await open_page("guest", f"/tournament/{tid}")
    await guest.click("#guest")
    await expect(guest.locator("#user")).to_contain_text("(guest)", timeout=WAIT_MS)
    await expect(guest.locator(".t-chat .chat-lines li")).to_have_text([f"ann: {LINE}"], timeout=WAIT_MS)
    await expect(guest.locator(".t-chat .t-chat-login")).to_have_text("Log in to chat")
    await expect(guest.locator(".t-chat .chat-form")).to_be_hidden()
    # One line a minute: the next is refused, the refusal under the input, the text kept.
    await chat.locator(".chat-form input").fill("again")
    await chat.locator(".chat-form input").press("Enter")
    await expect(chat.locator(".t-chat-error")).not_to_be_empty(timeout=WAIT_MS)
    await expect(chat.locator(".chat-form input")).to_have_value("again")
    await expect(chat.locator(".chat-lines li")).to_have_count(1)
    await shots(ann.page, "tournament-chat")

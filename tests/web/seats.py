"""Playing through the page as a person would: register, seek, accept, click and drag pieces.

Every wait is on a selector or an event of the page, with generous timeouts (the machine that
runs the suite may be busy); nothing sleeps.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import Page, expect

from server.app import App

TEST_OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "web"
"""Where the browser tests write their screenshots (and a failed test's pages)."""
WAIT_MS = 30_000


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as answer:
        body: bytes = answer.read()
        return body


async def api(hub: App, path: str) -> bytes:
    """GET from the hub's HTTP API (in a thread: the hub runs on this event loop)."""
    return await asyncio.to_thread(_get, f"http://127.0.0.1:{hub.port}{path}")


async def api_json(hub: App, path: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(await api(hub, path))
    return result


@dataclass
class Seat:
    """One player's page."""

    page: Page
    name: str

    async def register(self) -> None:
        page = self.page
        await page.fill("#auth-form input[name=name]", self.name)
        await page.fill("#auth-form input[name=password]", "correct horse battery")
        await page.click("#register")
        await expect(page.locator("#user")).to_have_text(self.name, timeout=WAIT_MS)
        await page.wait_for_selector("form.seek-form", timeout=WAIT_MS)

    async def seek(self, variant: str, *, kind: str = "fischer", colour: str = "first", **numbers: int) -> None:
        """Post a seek through the form (numbers: base_min, inc, main_min, period, periods, …)."""
        page = self.page
        await page.select_option("form.seek-form select[name=variant]", variant)
        await page.select_option("form.seek-form select[name=kind]", kind)
        for name, value in numbers.items():
            await page.fill(f"form.seek-form input[name={name}]", str(value))
        await page.select_option("form.seek-form select[name=colour]", colour)
        await page.click("form.seek-form button[name=seek]")
        await page.wait_for_selector("table.seeks tr.mine", timeout=WAIT_MS)

    async def accept_seek_of(self, owner: str) -> str:
        """Accept the seek of ``owner`` from the live list; returns the game id once on the board."""
        page = self.page
        row = page.locator("table.seeks tr", has_text=owner)
        await row.locator("button.accept").click(timeout=WAIT_MS)
        await page.wait_for_selector("section.game .board-wrap", timeout=WAIT_MS)
        game_id = await page.locator("section.game").get_attribute("data-game")
        assert game_id
        return game_id

    def square(self, name: str):  # type: ignore[no-untyped-def]
        return self.page.locator(f'svg.board rect[data-square="{name}"]')

    async def wait_ply(self, ply: int) -> None:
        await self.page.wait_for_selector(f'.board-wrap[data-ply="{ply}"]', timeout=WAIT_MS)

    async def wait_my_turn(self) -> None:
        await self.page.wait_for_selector('.board-wrap[data-my-turn="true"]', timeout=WAIT_MS)

    async def click_move(self, *squares: str) -> None:
        """Click the origin, then each square of the move (two for a Lion double move)."""
        await self.wait_my_turn()
        await self.square(squares[0]).click()
        for sq in squares[1:]:
            await self.page.wait_for_selector(f'svg.board [data-target="{sq}"]', timeout=WAIT_MS)
            await self.square(sq).click()

    async def drag_move(self, origin: str, target: str) -> None:
        await self.wait_my_turn()
        await self.square(origin).drag_to(self.square(target))

    async def drop(self, symbol: str, target: str) -> None:
        await self.wait_my_turn()
        await self.page.click(f'.hand button[data-drop="{symbol}"]:not([disabled])')
        await self.page.wait_for_selector(f'svg.board [data-target="{target}"]', timeout=WAIT_MS)
        await self.square(target).click()

    async def promote(self, choice: str) -> None:
        """Pick in the promotion dialog: "+" promote, "=" stay, or a chess piece letter."""
        await self.page.click(f'.promo-dialog button[data-promo="{choice}"]', timeout=WAIT_MS)

    async def action(self, name: str) -> None:
        """Click a game button; resign and abort ask for a confirmation, given here."""
        await self.page.click(f'button[data-action="{name}"]', timeout=WAIT_MS)
        if name in ("resign", "abort"):
            await self.page.click(f'button[data-action="{name}-confirm"]', timeout=WAIT_MS)

    async def wait_end(self, text: str) -> None:
        await expect(self.page.locator(".banner")).to_contain_text(text, timeout=WAIT_MS)


async def two_players(open_page, alice: str = "alice", bob: str = "bob") -> tuple[Seat, Seat]:  # type: ignore[no-untyped-def]
    a = Seat(await open_page(alice), alice)
    b = Seat(await open_page(bob), bob)
    await a.register()
    await b.register()
    return a, b


async def start_game(a: Seat, b: Seat, variant: str, **seek: int | str) -> str:
    """``a`` seeks as the first player, ``b`` accepts: both end up on the game's board."""
    await a.seek(variant, **seek)  # type: ignore[arg-type]
    game_id = await b.accept_seek_of(a.name)
    await a.page.wait_for_selector(f'section.game[data-game="{game_id}"] .board-wrap', timeout=WAIT_MS)
    return game_id


SIZES = {"laptop": (1366, 768), "desktop": (1920, 1080), "phone": (360, 740)}

_ON_SCREEN = """() => {
  const box = (sel) => { const e = document.querySelector(sel); if (!e) return null;
    const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
  return { height: innerHeight, width: document.documentElement.clientWidth,
    scroll: document.documentElement.scrollWidth, scrollY: scrollY,
    top: box(".clock.top"), bottom: box(".clock.bottom"), board: box(".board-wrap svg.board"),
    nav: box(".nav-buttons"), moves: (() => { const m = document.querySelector("ol.moves");
      return m ? { scroll: m.scrollWidth, client: m.clientWidth } : null; })() };
}"""


async def on_screen(page: Page, what: str) -> dict[str, Any]:
    """What a person sees of a game page without scrolling, asserted: no horizontal scroll,
    both clocks, the board and the move controls inside the viewport, the move list never
    scrolling sideways. Returns the measures (the board's box to compare later ones with)."""
    m: dict[str, Any] = await page.evaluate(_ON_SCREEN)
    size = f"{what} at {m['width']}x{m['height']}"
    assert m["scroll"] <= m["width"], f"{size}: {m['scroll']} px wide"
    assert m["scrollY"] == 0, f"{size}: the page scrolled by {m['scrollY']} px"
    for part in ("top", "bottom", "board", "nav"):
        box = m[part]
        assert box is not None and box["top"] >= 0 and box["bottom"] <= m["height"] + 0.5, (size, part, box)
        assert box["left"] >= 0 and box["right"] <= m["width"] + 0.5, (size, part, box)
    if m["moves"] is not None:
        assert m["moves"]["scroll"] <= m["moves"]["client"], f"{size}: the move list scrolls sideways"
    return m

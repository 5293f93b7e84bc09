"""The piece tooltip: shown after a pause over a piece (not at once; at once with Alt), or on a
long press on a touch screen; its diagram turned for a piece moving down the screen; never over
the move dots while a move is being made, gone when a drag starts and after the move (never
stale), and off with Settings → Piece tooltips."""

from __future__ import annotations

from playwright.async_api import Page, expect
from seats import start_game, two_players

from server.app import App

# Pointer events sent to a square's centre by the page itself; whether the tooltip shows is read
# in the same task (before any timer of the page can run), or ``wait_ms`` later by a timer of the
# page due before the tooltip's own 0.5 s pause ends (timers fire in the order they are due).
POINT = """async ([square, type, init, waitMs]) => {
  const rect = document.querySelector(`svg.board rect[data-square="${square}"]`).getBoundingClientRect();
  const at = { clientX: rect.x + rect.width / 2, clientY: rect.y + rect.height / 2 };
  const root = document.querySelector("svg.board");
  root.dispatchEvent(new PointerEvent(type, { bubbles: true, button: 0, pointerId: 7, ...at, ...init }));
  if (waitMs > 0) await new Promise((done) => setTimeout(done, waitMs));
  const tip = document.querySelector(".piece-tip");
  return tip !== null && !tip.hidden;
}"""


async def point(page: Page, square: str, kind: str, wait_ms: int = 0, **init: object) -> bool:
    """Send a pointer event of ``kind`` to ``square``; whether the tooltip shows then."""
    shown: bool = await page.evaluate(POINT, [square, kind, init, wait_ms])
    return shown


async def shown_after(page: Page, wait_ms: int) -> bool:
    """Whether the tooltip shows ``wait_ms`` from now (longer than its pause: a test that it
    stays away)."""
    shown: bool = await page.evaluate(
        """async (waitMs) => {
          await new Promise((done) => setTimeout(done, waitMs));
          const tip = document.querySelector(".piece-tip");
          return tip !== null && !tip.hidden;
        }""",
        wait_ms,
    )
    return shown


async def test_tooltip_timing_orientation_and_setting(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    await start_game(alice, bob, "minishogi")
    page = alice.page
    tip = page.locator(".piece-tip")
    board = page.locator(".board-wrap")
    # Not at once: after a pause over the piece (or at once with Alt).
    assert not await point(page, "a1", "pointermove", 250, pointerType="mouse")
    await expect(tip).to_be_visible()
    await expect(tip).to_contain_text("King")
    assert not await point(page, "c3", "pointermove", pointerType="mouse")   # an empty square
    assert not await point(page, "b1", "pointermove", pointerType="mouse")
    assert await point(page, "c1", "pointermove", pointerType="mouse", altKey=True)
    await expect(tip).to_contain_text("Silver")
    assert not await point(page, "c3", "pointermove", pointerType="mouse")

    await alice.square("e4").hover()                      # bob's pawn, moving down alice's screen
    await expect(tip).to_be_visible()
    await expect(tip).to_contain_text("Pawn")
    await expect(tip.locator("svg.diagram")).to_have_attribute("data-turned", "true")
    await shots(page, "tooltip-turned")
    await alice.square("a1").hover()                      # alice's own king points up
    await expect(tip).to_contain_text("King")
    await expect(tip.locator("svg.diagram")).to_have_attribute("data-turned", "false")

    await alice.square("e1").click()                      # a move begins: no tooltip over the dots
    await expect(tip).to_be_hidden()
    await page.wait_for_selector('svg.board [data-target="e4"]')
    await alice.square("e4").hover()
    await expect(board).to_have_attribute("data-hover", "e4")
    await expect(tip).to_be_hidden()
    await alice.square("e4").click()                      # Rx: the pawn's tooltip does not linger
    await bob.wait_ply(1)
    await alice.wait_ply(1)
    await expect(tip).to_be_hidden()
    await alice.square("d4").hover()
    await alice.square("e4").hover()
    await expect(tip).to_contain_text("Rook")             # what stands there now

    # Bob: the tooltip goes when he starts dragging, stays away during the drag, and is not
    # back after the drop.
    bob_tip = bob.page.locator(".piece-tip")
    await bob.wait_my_turn()
    await bob.square("d5").hover()
    await expect(bob_tip).to_contain_text("Gold")
    target = await bob.square("e4").bounding_box()
    assert target is not None
    await bob.page.mouse.down()
    await bob.page.mouse.move(target["x"] + target["width"] / 2, target["y"] + target["height"] / 2, steps=8)
    await expect(bob.page.locator("svg.board .ghost")).to_have_count(1)   # dragging
    assert not await shown_after(bob.page, 900)           # held over alice's rook: still nothing
    await bob.page.mouse.up()
    await alice.wait_ply(2)
    await expect(bob_tip).to_be_hidden()

    # A touch screen: a long press on a piece shows it (here bob's king, which alice cannot move).
    await alice.wait_my_turn()
    await page.mouse.move(0, 0)
    assert not await point(page, "e5", "pointerdown", pointerType="touch")
    await expect(tip).to_contain_text("King")
    await point(page, "e5", "pointerup", pointerType="touch")

    # Turned off: not even Alt (which shows it at once when on) brings it.
    await page.click(".settings summary")
    await page.uncheck("#set-tooltips")
    await page.click(".settings summary")
    await page.keyboard.down("Alt")
    await alice.square("a1").hover()
    await expect(board).to_have_attribute("data-hover", "a1")
    await expect(tip).to_be_hidden()
    await page.keyboard.up("Alt")

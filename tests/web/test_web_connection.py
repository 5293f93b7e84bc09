"""A connection that dies without closing (a proxy that stops forwarding, no reset): the page
notices within seconds, says so, reconnects and replays what it missed; a move made meanwhile
is drawn as pending, then confirmed once the connection is back, or refused with the reason."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.async_api import expect
from seats import WAIT_MS, Seat, start_game

from server.app import App

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from support import TcpForwarder

# Page time moved on once the proxy is frozen: more than web/src/net.ts's DEAD_AFTER_MS (6 s
# without a byte) plus one watchdog interval (0.5 s). The watchdog's timers fire on the way, so
# the page pings into the frozen proxy and gives up exactly as it would in 7 s of waiting.
SILENCE_MS = 7_000


async def test_a_silent_connection_is_noticed_and_pending_moves_settled(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    proxy = TcpForwarder("127.0.0.1", hub.port)
    await proxy.start()
    alice = Seat(await open_page("alice", port=proxy.port, clock=True), "alice")  # through the proxy
    bob = Seat(await open_page("bob"), "bob")
    try:
        await alice.register()
        await bob.register()
        await start_game(alice, bob, "minishogi")
        await alice.drag_move("e1", "e4")
        await bob.click_move("d5", "e4")
        await alice.wait_ply(2)
        status = alice.page.locator("#status")
        await expect(status).to_have_text("Connected")

        proxy.freeze()                          # nothing goes through any more, nothing is closed
        await expect(status).to_have_text("Connected")
        await alice.page.clock.run_for(SILENCE_MS)
        await expect(status).to_have_text("Reconnecting…", timeout=WAIT_MS)
        await alice.drop("P", "d4")             # made while cut off: drawn, marked pending
        board = alice.page.locator(".board-wrap")
        await expect(board).to_have_attribute("data-pending", "P@d4")
        await expect(alice.page.locator('svg.board g.pc[data-square="d4"]')).to_have_attribute("data-piece", "P")
        await expect(alice.page.locator(".conn-note")).to_contain_text("will be sent when it is back")
        await shots(alice.page, "connection-lost")
        proxy.thaw()
        await bob.wait_ply(3)                   # sent after the reconnection, and played
        await alice.wait_ply(3)
        await expect(board).not_to_have_attribute("data-pending", "P@d4")
        await expect(status).to_have_text("Connected")
        await expect(alice.page.locator(".conn-note")).to_be_hidden()

        await bob.drop("R", "a3")
        await alice.wait_ply(4)
        proxy.freeze()
        await alice.click_move("d1", "a4")      # sent at once, into the void: pending
        await expect(board).to_have_attribute("data-pending", "d1a4")
        await expect(status).to_have_text("Connected")
        await alice.page.clock.run_for(SILENCE_MS)
        await expect(status).to_have_text("Reconnecting…", timeout=WAIT_MS)
        await bob.action("resign")              # alice does not hear of it yet
        await bob.wait_end("alice wins by resignation")
        proxy.thaw()
        # The missed end is replayed, and the pending move clearly refused.
        await alice.wait_end("alice wins by resignation")
        await expect(alice.page.locator(".game .error")).to_contain_text("Your move was not played: the game is over.")
        await expect(board).not_to_have_attribute("data-pending", "d1a4")
        await expect(board).to_have_attribute("data-ply", "4")
    finally:
        # Close the proxied page first: cutting requests it still has in flight would fail them.
        await alice.page.context.close()
        await proxy.cut()

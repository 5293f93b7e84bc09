"""Play the computer from the lobby in Chromium: the form's level and "Play with the computer"
start a casual game at once; the header marks the computer; a real worker answers a move."""

from __future__ import annotations

from pathlib import Path

import pytest_asyncio
from playwright.async_api import expect
from seats import WAIT_MS, Seat, api_json
from worker_support import WorkerProcess

from server.app import App


@pytest_asyncio.fixture(loop_scope="session")
async def worker(hub: App, tmp_path: Path):  # type: ignore[no-untyped-def]
    process = await WorkerProcess.start(hub.port, tmp_path / "worker.log", "web-worker")
    yield process
    await process.stop()


async def test_play_the_computer_from_the_lobby(hub: App, open_page, worker, shots) -> None:  # type: ignore[no-untyped-def]
    alice = Seat(await open_page("alice"), "alice")
    await alice.register()
    page = alice.page
    form = "form.seek-form"
    await page.select_option(f"{form} select[name=variant]", "minishogi")
    await page.select_option(f"{form} select[name=colour]", "first")
    await page.select_option(f"{form} select[name=level]", "2")
    await page.click(f"{form} button[name=computer]")
    await page.wait_for_selector("section.game .board-wrap", timeout=WAIT_MS)
    await expect(page.locator(".clock.top a.name")).to_have_text("Computer (computer)")
    game_id = await page.locator("section.game").get_attribute("data-game")
    await alice.click_move("a2", "a3")  # the pawn forward
    await alice.wait_ply(2)  # the computer's answer, from the worker
    await shots(page, "computer-game")
    record = await api_json(hub, f"/api/games/{game_id}")
    assert record["rated"] is False and record["second"]["name"] == "Computer"
    assert hub.computer.played["minishogi"] == 1

"""The review page's computer analysis in Chromium: request it, see the progress, then the
evaluation graph, the best-move arrow and the inaccuracy / mistake / blunder marks in the move
list. The worker's submissions are the job queue's (the handler a worker's POST reaches), so
the page shows what a real worker's results would give; screenshots written."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

from playwright.async_api import Page, expect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "transport"))
from seats import TEST_OUTPUT
from test_review import save_game
from ws_support import TEST_WORKER_KEY

from server.app import App
from server.rules import Game, get_variant
from server.rules.analysis import advices
from server.rules.notation import display_move


async def register(page: Page, name: str) -> None:
    """Log the page in as a new registered player (analyses are registered players' only)."""
    await page.fill("#auth-form input[name=name]", name)
    await page.fill("#auth-form input[name=password]", "correct horse battery")
    await page.click("#register")
    await expect(page.locator("#user")).to_have_text(name)


async def test_request_progress_graph_arrow_and_marks(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    game = Game(get_variant("wildcastle"))
    rng = random.Random(5)
    while game.ply < 12:
        game.play(rng.choice(game.legal_moves()))
    game_id, _ = await save_game(hub.store, variant="wildcastle", moves=list(game.moves))
    page = await open_page("viewer", f"/game/{game_id}")
    panel = page.locator("section.analysis")
    await expect(panel).to_have_attribute("data-analysis", "none")
    await expect(page.locator('[data-action="request-analysis"]')).to_be_visible()
    # Not logged in: the page says who may request, and a click is refused in words.
    await expect(page.locator('[data-note="registered-only"]')).to_be_visible()
    await page.locator('[data-action="request-analysis"]').click()
    await expect(panel.locator('[role="alert"]')).to_contain_text("registered account")
    await register(page, "viewer")
    await expect(panel).not_to_contain_text("Dai Shogi")  # the warning is Dai Shogi's own
    await page.locator('[data-action="request-analysis"]').click()
    await expect(panel).to_have_attribute("data-analysis", "queued")
    await expect(page.locator(".analysis-progress")).to_contain_text("Queued")
    # The worker: the job it acquires, its partial then final submissions.
    job = await hub.jobs.acquire("w1", None)
    assert job is not None and job["game_id"] == game_id
    scores = [20, 30, 10, 25, 15, 20, 25, -320, -300, -530, -540, -545, -560]  # by ply  # first player's view
    # The engine's best move is the move played, but before moves 7 and 9: another move
    # (a move the engine itself chose is never judged).
    best: list[str | None] = [*game.moves, None]
    for p in (6, 8):
        best[p] = next(m for m in sorted(Game(game.variant, game.position_at(p).fen()).legal_moves())
                       if m != game.moves[p])
    entries = [
        {"ply": p, "score": {"cp": cp}, "best": best[p],
         "pv": " ".join([best[p], *game.moves[p + 1 : p + 3]]) if best[p] else "",
         "depth": 12, "nodes": 1000, "time_ms": 100}
        for p, cp in enumerate(scores)
    ]
    assert await hub.jobs.submit_analysis(job["work"]["id"], entries[:5], False) == []
    await expect(page.locator(".analysis-progress")).to_contain_text("5 of 13 positions")
    await shots(page, "analysis-progress")
    assert await hub.jobs.submit_analysis(job["work"]["id"], entries, True) == []
    await expect(panel).to_have_attribute("data-analysis", "done")
    await expect(page.locator(".eval-graph .eval-line")).to_be_visible()
    # Move 7 (first player: +0.25 → -3.20) is a blunder, move 9 (-3.00 → -5.30) a mistake.
    await expect(page.locator('.moves .mv[data-ply="7"] .glyph.blunder')).to_have_text("??")
    await expect(page.locator('.moves .mv[data-ply="9"] .glyph.mistake')).to_have_text("?")
    await expect(page.locator(".eval-graph .eval-mark.blunder")).to_have_count(1)
    await expect(page.locator('.analysis-summary tr[data-side="first"] td').nth(3)).to_have_text("1")
    await expect(page.locator(".analysis-summary tr[data-side] td:first-child")).to_have_text(["White", "Black"])
    # At each ply the board shows the engine's best move from there; the line and the best
    # move read as the move list does (SAN), numbered as it is.
    await page.locator('.moves .mv[data-ply="6"]').click()
    await expect(page.locator(f'.best-arrow[data-arrow="{best[6]}"]')).to_be_visible()
    pos = game.position_at(6)
    san = display_move(pos, pos.move_from_uci(best[6]))
    await expect(page.locator(".analysis-line")).to_contain_text(f"+0.25 depth 12: 4. {san} ")
    await page.locator('.moves .mv[data-ply="7"]').click()  # the blunder, seen from after it
    await expect(page.locator(".analysis-advice")).to_have_text(f"Blunder. {san} was best.")
    # Not one engine move in coordinates on the panel.
    assert best[6] not in await page.locator("section.analysis").inner_text()
    # On a 360 px phone nothing of the analysis is wider than its panel, nor the page.
    await page.set_viewport_size({"width": 360, "height": 740})
    widths = await page.evaluate("""() => ({ page: document.documentElement.scrollWidth,
      panel: document.querySelector("section.analysis").getBoundingClientRect().right,
      table: document.querySelector(".analysis-summary").getBoundingClientRect().right,
      widest: Math.max(...[...document.querySelectorAll("section.analysis *")].map((e) => e.getBoundingClientRect().right)) })""")
    assert widths["page"] <= 360 and widths["table"] <= widths["panel"] and widths["widest"] <= widths["panel"], widths
    await page.locator("section.analysis").screenshot(path=str(TEST_OUTPUT / "phone-analysis.png"))
    await page.set_viewport_size({"width": 1280, "height": 900})
    await shots(page, "analysis")


async def test_a_real_workers_analysis_on_the_review_page(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    """The whole way: the button, a real worker process with its engine, the page's graph and
    as many marks as the server judged."""
    game = Game(get_variant("minishogi"))
    rng = random.Random(8)
    while game.ply < 14 and game.outcome() is None:
        game.play(rng.choice(game.legal_moves()))
    game_id, _ = await save_game(hub.store, moves=list(game.moves))
    page = await open_page("viewer", f"/game/{game_id}")
    await register(page, "viewer")
    await page.locator("select[name=limit]").select_option("depth:8")
    await page.locator('[data-action="request-analysis"]').click()
    await expect(page.locator("section.analysis")).to_have_attribute("data-analysis", "queued")
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.worker", "--url", f"http://127.0.0.1:{hub.port}",
        "--key", TEST_WORKER_KEY, "--slots", "1", "--nice", "0",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await expect(page.locator("section.analysis")).to_have_attribute("data-analysis", "done", timeout=120_000)
    finally:
        worker.kill()
        await worker.wait()
    stored = await hub.store.get_analysis(game_id)
    assert stored is not None and stored.state == "done" and stored.limits.depth == 8
    advice = advices(stored.evals, 0, game.moves)
    await expect(page.locator(".eval-graph .eval-line")).to_be_visible()
    await expect(page.locator(".moves .glyph")).to_have_count(len(advice))
    await expect(page.locator(".eval-graph .eval-mark")).to_have_count(len(advice))
    await page.locator('.moves .mv[data-ply="1"]').click()
    best = stored.evals[1].best
    if best is not None:
        await expect(page.locator(f'.best-arrow[data-arrow="{best}"]')).to_be_visible()
    await shots(page, "analysis-minishogi")


async def test_the_slow_analysis_warning_shows_on_dai_shogi_games_only(hub: App, open_page) -> None:  # type: ignore[no-untyped-def]
    game = Game(get_variant("daishogi"))
    rng = random.Random(3)
    while game.ply < 4:
        game.play(rng.choice(game.legal_moves()))
    game_id, _ = await save_game(hub.store, variant="daishogi", moves=list(game.moves))
    page = await open_page("viewer", f"/game/{game_id}")
    await expect(page.locator('[data-action="request-analysis"]')).to_be_visible()
    await expect(page.locator("section.analysis")).to_contain_text("Dai Shogi is slow")

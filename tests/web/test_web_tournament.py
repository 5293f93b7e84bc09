"""Tournaments in Chromium (docs/web.md, docs/tournaments.md): a player creates an arena from the
tournaments page, another finds it there and joins; the tournament starts when both are in and
each player's game opens by itself; the first player berserks, moves are made through the
board, the other resigns; a visitor watching the tournament page sees the standings change
(pushed, no reload) with the berserk mark, the pairings (an earlier wave read on demand) and the
games being played; the next wave's game opens by itself, and a second win in a row sets the
winner on fire. A Swiss of
three (a browser player, two websocket players) to its end with its byes. On a 360 px phone:
the tournaments page, a password, a round robin to its end and its podium, no horizontal
scroll."""

from __future__ import annotations

import asyncio
import contextlib
import re

from playwright.async_api import Page, expect
from seats import WAIT_MS, Seat, two_players
from ws_support import Client

from server.app import App

_SCROLL = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


async def fits(page: Page, what: str) -> None:
    scroll, width = await page.evaluate(_SCROLL)
    assert scroll <= width, f"{what}: {scroll} px wide in {width}"


async def create(
    page: Page, name: str, format_: str, *, players: int, start_in: int | None = None, password: str = "",
    rounds: int | None = None,
) -> str:
    """Create a Mini-Shogi tournament through the form (2 min + 0, starting when ``players``
    have joined, or in ``start_in`` minutes); returns its id once its page shows."""
    await page.click('nav a[href="/tournaments"]')
    form = "form.tournament-form"
    await page.fill(f"{form} input[name=name]", name)
    await page.select_option(f"{form} select[name=format]", format_)
    await page.select_option(f"{form} select[name=variant]", "minishogi")
    await page.select_option(f"{form} select[name=kind]", "fischer")
    await page.fill(f"{form} input[name=base_min]", "2")
    await page.fill(f"{form} input[name=inc]", "0")
    if start_in is None:
        await page.select_option(f"{form} select[name=start]", "joined")
        await page.fill(f"{form} input[name=start_joined]", str(players))
    else:
        await page.select_option(f"{form} select[name=start]", "in")
        await page.fill(f"{form} input[name=start_in]", str(start_in))
    if rounds is not None:
        await page.fill(f"{form} input[name=rounds]", str(rounds))
    if password:
        await page.click(f"{form} details.more-options summary")
        await page.fill(f"{form} input[name=password]", password)
    await page.click(f"{form} button[name=create]")
    section = page.locator('section.tournament-page[data-status="created"]')
    await expect(section.locator("h2")).to_have_text(name, timeout=WAIT_MS)
    tid = await section.get_attribute("data-tournament")
    assert tid
    return tid


async def join_from_the_list(seat: Seat, tid: str, name: str) -> None:
    """Open the tournaments page, find the upcoming tournament, open it and join."""
    page = seat.page
    await page.click('nav a[href="/tournaments"]')
    item = page.locator(f'ul.tournaments[data-status="created"] li[data-tournament="{tid}"]')
    await expect(item).to_contain_text("Starts when 2 players have joined", timeout=WAIT_MS)
    await item.locator("a.t-name").click()
    await expect(page.locator("section.tournament-page h2")).to_have_text(name, timeout=WAIT_MS)
    await page.click('button[data-action="t-join"]')


async def on_board(seat: Seat, game: str | None = None, *, not_game: str | None = None) -> str:
    """Wait until the seat's page shows a game (``game``, or any other than ``not_game``)."""
    if game is not None:
        selector = f'section.game[data-game="{game}"] .board-wrap'
    else:
        selector = f'section.game:not([data-game="{not_game}"]) .board-wrap' if not_game else "section.game .board-wrap"
    await seat.page.wait_for_selector(selector, timeout=WAIT_MS)
    found = await seat.page.locator("section.game").get_attribute("data-game")
    assert found
    return found


async def sente_and_gote(a: Seat, b: Seat) -> tuple[Seat, Seat]:
    """The two players of a new Mini-Shogi game: the one to move first, then the other."""
    for seat in (a, b):
        await seat.page.wait_for_selector(".board-wrap[data-my-turn]", timeout=WAIT_MS)
    first = await a.page.locator(".board-wrap").get_attribute("data-my-turn") == "true"
    return (a, b) if first else (b, a)


async def test_join_from_the_tournaments_page_play_and_see_the_standings_change(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await two_players(open_page)
    tid = await create(alice.page, "Web arena", "arena", players=2)
    await expect(alice.page.locator(".t-terms")).to_contain_text("Arena · Mini-Shogi · 2 min + 0s · casual · 1 h · berserk allowed")
    await expect(alice.page.locator(".t-when")).to_have_text("Starts when 2 players have joined")
    await alice.page.click('button[data-action="t-join"]')
    await expect(alice.page.locator(".t-entry .you-in")).to_have_text("You are in")
    await expect(alice.page.locator('table.standings tr[data-player="alice"]')).to_be_visible()
    # A visitor (no login) watches the tournament's page: every change is pushed to it.
    carol = await open_page("carol", f"/tournament/{tid}")
    await expect(carol.locator('table.standings tr[data-player="alice"] td.score')).to_have_text("0")
    await shots(carol, "tournament-upcoming")

    await join_from_the_list(bob, tid, "Web arena")   # the second entry starts it
    # Each player's game opens by itself (the game_start each gets), naming its tournament.
    game = await on_board(alice)
    assert await on_board(bob, game) == game
    await expect(alice.page.locator(".tournament-game a.tournament-link")).to_be_visible()
    await expect(carol.locator(".t-when")).to_contain_text("Running · ends in")
    await expect(carol.locator(f'.t-playing a[data-game="{game}"]')).to_be_visible()

    sente, gote = await sente_and_gote(alice, bob)
    page = sente.page
    # Berserk before the first move: the clock halves (2 min → 1 min), the button goes; a
    # tournament game offers Resign, never Abort.
    assert await page.locator('button[data-action="abort"]').count() == 0
    await expect(page.locator('button[data-action="resign"]')).to_be_visible()
    await shots(page, "tournament-berserk", full_page=False)
    await page.click('button[data-action="berserk"]')
    await expect(page.locator('button[data-action="berserk"]')).to_have_count(0)
    await expect(page.locator(".clock.bottom .time")).to_have_text("1:00")
    # A reload keeps it (the snapshot says who berserked): the bolt, no second berserk.
    await page.reload()
    await expect(page.locator(".clock.bottom .berserks")).to_be_visible()
    await expect(page.locator(".clock.bottom .time")).to_have_text("1:00")
    assert await page.locator('button[data-action="berserk"]').count() == 0
    await expect(gote.page.locator(".clock.top .time")).to_have_text("1:00")
    await expect(gote.page.locator('button[data-action="berserk"]')).to_be_visible()
    await sente.click_move("e1", "e4")
    await gote.click_move("d5", "e4")
    await sente.wait_ply(2)
    await shots(page, "tournament-game")
    await gote.action("resign")

    # The standings change on the watching page (pushed): the winner 2 points, the berserk mark.
    row = carol.locator(f'table.standings tr[data-player="{sente.name}"]')
    await expect(row.locator("td.score")).to_have_text("2")
    await expect(row.locator(".berserks")).to_be_visible()
    await expect(carol.locator(f'table.standings tr[data-player="{gote.name}"] td.score')).to_have_text("0")
    await expect(carol.locator("table.standings tbody tr").first).to_have_attribute("data-player", sente.name)
    # The next wave's game opens by itself for both; the pairings follow the current wave.
    second = await on_board(alice, not_game=game)
    assert await on_board(bob, second) == second
    await expect(carol.locator(f'.t-playing a[data-game="{second}"]')).to_be_visible()
    await expect(carol.locator('.t-round[data-round="2"]')).to_contain_text("playing")
    # An earlier wave read on demand (tournament_round): the first wave's result, its berserk.
    await carol.select_option('select[name="t-round"]', "1")
    wave1 = carol.locator('.t-round[data-round="1"]')
    await expect(wave1).to_contain_text("1-0" if sente.name == alice.name else "0-1")
    await expect(wave1.locator(".berserks")).to_have_count(1)
    await carol.select_option('select[name="t-round"]', "2")  # the current wave again, followed
    # A second win in a row (the loser resigns at once): on fire.
    await gote.action("resign")
    await expect(row.locator("td.score")).to_have_text("4")
    await expect(row.locator(".mark.fire")).to_be_visible()
    await expect(row.locator("td.sheet")).to_have_text("2 2")
    third = await on_board(alice, not_game=second)
    assert await on_board(bob, third) == third
    await expect(carol.locator(f'.t-playing a[data-game="{third}"]')).to_be_visible()
    await shots(carol, "tournament")

    # From the game, the tournament's page: "Your game »" leads back to the board.
    await alice.page.click(".tournament-game a.tournament-link")
    mine = alice.page.locator(f'.t-entry a[data-my-game="{third}"]')
    await expect(mine).to_be_visible()
    # Pause (no new pairing until resumed) and resume, as the server's standings say.
    await alice.page.click('button[data-action="t-pause"]')
    await expect(alice.page.locator(".t-entry .you-in")).to_have_text("You are in (paused)")
    await expect(carol.locator('table.standings tr[data-player="alice"] .t-status')).to_have_text("paused")
    await alice.page.click('button[data-action="t-resume"]')
    await expect(alice.page.locator(".t-entry .you-in")).to_have_text("You are in")
    await expect(carol.locator('table.standings tr[data-player="alice"] .t-status')).to_have_count(0)
    await mine.click()
    await on_board(alice, third)


async def test_tournament_pages_on_a_360_px_phone_and_the_podium(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    phone = {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True}
    alice = Seat(await open_page("alice", **phone), "alice")
    bob = Seat(await open_page("bob"), "bob")
    await alice.register()
    await bob.register()
    # An arena starting in 30 minutes, with a password: its page and the list count down to it.
    evening = await create(alice.page, "Evening arena", "arena", players=2, start_in=30, password="sesame")
    await expect(alice.page.locator(".t-when")).to_have_text(re.compile(r"^Starts in (30:00|29:[0-5]\d)$"))
    await expect(alice.page.locator(".t-terms")).to_contain_text("· password")
    await fits(alice.page, "an upcoming tournament")
    # Bob joins it with the password: a wrong one is refused and said, the right one lets him in.
    await bob.page.goto(f"http://127.0.0.1:{hub.port}/tournament/{evening}")
    field = bob.page.locator('input[name="t-password"]')
    await field.fill("open sesame")
    await bob.page.click('button[data-action="t-join"]')
    await expect(bob.page.locator(".t-head .error")).to_contain_text("password")
    await expect(bob.page.locator(".t-entry .you-in")).to_have_count(0)
    await field.fill("sesame")
    await bob.page.click('button[data-action="t-join"]')
    await expect(bob.page.locator(".t-entry .you-in")).to_have_text("You are in")
    await expect(bob.page.locator('button[data-action="t-withdraw"]')).to_be_visible()
    await expect(alice.page.locator('table.standings tr[data-player="bob"]')).to_be_visible()  # pushed
    await bob.page.click('button[data-action="t-withdraw"]')
    await expect(bob.page.locator('button[data-action="t-join"]')).to_be_visible()
    await expect(bob.page.locator(".t-entry .you-in")).to_have_count(0)
    await alice.page.click('nav a[href="/tournaments"]')
    upcoming = alice.page.locator('ul.tournaments[data-status="created"] li')
    await expect(upcoming.locator(".t-when")).to_have_text(re.compile(r"^Starts in (30:00|29:[0-5]\d)$"))
    await fits(alice.page, "the tournaments page")
    await shots(alice.page, "phone-tournaments", full_page=False)
    tid = await create(alice.page, "Phone round robin", "round_robin", players=2)
    await alice.page.click('button[data-action="t-join"]')
    await join_from_the_list(bob, tid, "Phone round robin")
    game = await on_board(alice)
    await on_board(bob, game)
    await fits(alice.page, "a tournament game")
    sente, gote = await sente_and_gote(alice, bob)
    await sente.click_move("e1", "e4")
    await gote.action("resign")
    await alice.wait_end("wins by resignation")
    # The round robin of two is over after its one game: the podium, reached from the game.
    await alice.page.click(".tournament-game a.tournament-link")
    section = alice.page.locator('section.tournament-page[data-status="finished"]')
    await expect(section.locator('.podium .place[data-rank="1"]')).to_contain_text(sente.name)
    await expect(section.locator('.podium .place[data-rank="2"]')).to_contain_text(gote.name)
    await expect(section.locator(".t-when")).to_have_text("Finished")
    await expect(section.locator('button[data-action="t-join"]')).to_have_count(0)
    await expect(section.locator('.t-round[data-round="1"]')).to_contain_text("1-0" if sente is alice else "0-1")
    await fits(alice.page, "a finished tournament")
    await shots(alice.page, "phone-tournament-podium")
    await alice.page.click('nav a[href="/tournaments"]')
    await expect(alice.page.locator(f'ul.tournaments[data-status="finished"] li[data-tournament="{tid}"]')).to_contain_text("Finished")
    # A visitor reads the stored game, which names its tournament and leads to it.
    visitor = await open_page("visitor", f"/game/{game}")
    await expect(visitor.locator(".tournament-game")).to_contain_text("A tournament game (round 1)")
    await visitor.click(".tournament-game a.tournament-link")
    await expect(visitor.locator('section.tournament-page[data-status="finished"] .podium')).to_be_visible()


async def resign_unless_against(client: Client, beaten: str) -> None:
    """A websocket player of a tournament: resigns each of its games at once, except against
    ``beaten`` (who resigns then)."""
    while True:
        start = await client.next(lambda m: m["t"] == "game_start" and "tournament" in m["d"], timeout=3600)
        if start["d"]["opponent"]["name"] != beaten:
            await client.send("resign", {"game": start["d"]["game"]})


async def test_a_swiss_with_byes_to_its_end(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    """A Swiss of three over two rounds: a player in the browser, two over websockets who
    resign every game (bob beats carol). Each round has a bye (1 point); the standings show the
    tie-break columns, the pairings each round's game and bye, the podium the hand-computed
    scores: alice wins both games she plays (2), bob and carol each score their bye (1)."""
    alice = Seat(await open_page("alice"), "alice")
    await alice.register()
    tid = await create(alice.page, "Web Swiss", "swiss", players=3, rounds=2)
    await expect(alice.page.locator(".t-terms")).to_contain_text("Swiss · Mini-Shogi · 2 min + 0s · casual · 2 rounds")
    await alice.page.click('button[data-action="t-join"]')
    bots = []
    for name, beaten in (("bob", "carol"), ("carol", "")):
        client = await Client.open(hub.url, name)
        assert (await client.register(name))["t"] == "welcome"
        await client.ok("tournament_join", {"id": tid})
        bots.append((client, asyncio.get_running_loop().create_task(resign_unless_against(client, beaten))))
    try:
        # alice's game opens by itself (round 1, or round 2 after a bye); a visitor watches.
        await alice.page.wait_for_selector("section.game .board-wrap", timeout=WAIT_MS)
        visitor = await open_page("visitor", f"/tournament/{tid}")
        section = visitor.locator('section.tournament-page[data-status="finished"]')
        first = section.locator('.podium .place[data-rank="1"]')
        await expect(first).to_contain_text("alice")
        await expect(first).to_contain_text("2 points")
        scores = {name: section.locator(f'table.standings tr[data-player="{name}"] td.score') for name in ("alice", "bob", "carol")}
        await expect(scores["alice"]).to_have_text("2")
        await expect(scores["bob"]).to_have_text("1")
        await expect(scores["carol"]).to_have_text("1")
        await expect(section.locator("table.standings thead tr")).to_have_text("#PlayerRatingBuchholz (cut 1)SBScore")
        # By hand: alice met bob and carol (1 each: cut the lowest); a bye counts as a game
        # against one's own final score (FIDE C.07 §16): bob and carol 2 + 1 - 1; SB: alice
        # beat two players of 1, bob and carol beat their byes' virtual opponent of 1.
        for name, (buchholz, sb) in {"alice": ("1", "2"), "bob": ("2", "1"), "carol": ("2", "1")}.items():
            row = section.locator(f'table.standings tr[data-player="{name}"] td')
            await expect(row.nth(3)).to_have_text(buchholz)
            await expect(row.nth(4)).to_have_text(sb)
        for round_ in (2, 1):  # the last round from the view, the first read on demand
            if round_ == 1:
                await visitor.select_option('select[name="t-round"]', "1")
            block = section.locator(f'.t-round[data-round="{round_}"]')
            await expect(block.locator("li a[data-game]")).to_have_count(1)
            await expect(block).to_contain_text(": bye (1)")
        await shots(visitor, "tournament-swiss")
    finally:
        for client, task in bots:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await client.close()

"""The tournament page's standings by page in Chromium (docs/web.md): a Swiss of 25 stored
directly in round 1 (no games played: cheap); a player's page opens on the page with their row,
turns to the others (prev / next) and back ("My position"); a result on their page is pushed
there; a visitor on a 360 px phone sees page 1 and the pager without horizontal scroll."""

from __future__ import annotations

from typing import Any

from playwright.async_api import expect
from seats import WAIT_MS, Seat
from ws_support import Client

from server.app import App
from server.hub.effects import GameFinished
from server.hub.lobby import TournamentTag
from server.hub.tournament.values import (
    Bye,
    Finished,
    Joined,
    Paired,
    Started,
    TournamentGame,
    TournamentSettings,
)
from server.rules.time_control import Fischer
from server.store.tournaments import ms_datetime

NOW = 1_800_000_000_000
_SCROLL = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


async def swiss_of_25(hub: App, me: str) -> tuple[str, list[str]]:
    """p_i plays p_(i+12) (the last has the bye); games 0–9 won by white; ``me`` is p15."""
    ids = [f"x{i:02d}" for i in range(25)]
    ids[15] = me
    settings = TournamentSettings(
        "Paged cup", "swiss", "minishogi", Fischer(120_000, 0), rated=False,
        start_when_joined=25, rounds=3,
    )
    tid = await hub.store.create_tournament(settings, created_by=None, now=ms_datetime(NOW))
    events: list[Any] = [Joined(pid, f"name{i:02d}", 2000 - 10 * i, NOW) for i, pid in enumerate(ids)]
    events.append(Started(NOW))
    events += [Paired(f"PgGame{i:02d}", 1, ids[i], ids[i + 12], NOW) for i in range(12)]
    events.append(Bye(ids[24], 1, 1.0, NOW))
    events += [
        Finished(f"PgGame{i:02d}", TournamentGame(ids[i], ids[i + 12], "1-0", 20), NOW)
        for i in range(10)
    ]
    await hub.store.append_tournament_events(tid, 0, events)
    return tid, ids


async def test_the_standings_turn_page_and_a_phone_fits(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    seat = Seat(await open_page("pager"), "pager")
    await seat.register()
    client = await Client.open(hub.url, "pager-ws")
    try:
        assert (await client.login("pager", "correct horse battery"))["t"] == "welcome"
        assert client.player is not None
        tid, ids = await swiss_of_25(hub, str(client.player["id"]))
    finally:
        await client.close()
    page = seat.page
    await page.evaluate(f"() => {{ history.pushState(null, '', '/tournament/{tid}'); dispatchEvent(new PopStateEvent('popstate')); }}")
    standings = page.locator("section.tournament-page table.standings tbody tr")
    pager = page.locator("section.tournament-page nav.t-pager")
    # Opens on the player's page (no point yet: not the first page), their row marked.
    await expect(page.locator('table.standings tr.mine[data-player="name15"]')).to_be_visible(timeout=WAIT_MS)
    await expect(pager.locator(".t-page")).to_have_text("Page 2 of 3")
    await expect(pager.locator(".t-players")).to_have_text("25 players")
    await expect(standings).to_have_count(10)
    await pager.locator('button[data-action="t-prev"]').click()
    await expect(pager.locator(".t-page")).to_have_text("Page 1 of 3")
    await expect(pager.locator('button[data-action="t-prev"]')).to_be_disabled()
    await expect(standings.first.locator("td.rank")).to_have_text("1")
    await expect(page.locator("table.standings tr.mine")).to_have_count(0)
    for _ in range(2):
        await pager.locator('button[data-action="t-next"]').click()
    await expect(pager.locator(".t-page")).to_have_text("Page 3 of 3")
    await expect(standings).to_have_count(5)
    await expect(pager.locator('button[data-action="t-next"]')).to_be_disabled()
    await pager.locator('button[data-action="t-mine"]').click()
    await expect(page.locator('table.standings tr.mine[data-player="name15"]')).to_be_visible()
    # A draw on the player's page (p10–p22): pushed to it, half a point each.
    hub.tournaments.game_ended(
        GameFinished(
            "PgGame10", "minishogi", False, ids[10], ids[22], "1/2-1/2", "agreement", 20, "", NOW,
            tournament=TournamentTag(tid, 1),
        )
    )
    await expect(page.locator('table.standings tr[data-player="name22"] td.score')).to_have_text("½", timeout=WAIT_MS)
    await shots(page, "tournament-standings-page")
    # A visitor on a phone: page 1, the pager, nothing wider than the screen.
    phone = await open_page(
        "phone", f"/tournament/{tid}", viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
    )
    await expect(phone.locator("nav.t-pager .t-page")).to_have_text("Page 1 of 3", timeout=WAIT_MS)
    await phone.locator('nav.t-pager button[data-action="t-next"]').click()
    await expect(phone.locator("nav.t-pager .t-page")).to_have_text("Page 2 of 3")
    await shots(phone, "tournament-standings-page-phone")
    scroll, width = await phone.evaluate(_SCROLL)
    assert scroll <= width, f"{scroll} px wide in {width}"

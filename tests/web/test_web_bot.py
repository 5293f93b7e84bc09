"""A human challenges a bot from the lobby in Chromium: the bot (berserk, unmodified, through the
Bot API; tests/bot_support.py) is online, listed with lichess's BOT title; the human's
challenge reaches its event stream, it accepts, and the game is played to mate through the
board on one side and the game stream on the other. The BOT title shows in the lobby, the
game's header and the game list (/review)."""

from __future__ import annotations

from bot_support import Bot, call, new_token
from playwright.async_api import expect
from seats import WAIT_MS, Seat, api_json

from server.app import App

MINI_MATE = ["a1b2", "a5a2", "b2c3", "d5c4"]  # Mini-Shogi: the second player (the bot) mates


async def test_a_human_challenges_a_bot_from_the_lobby(hub: App, open_page, shots) -> None:  # type: ignore[no-untyped-def]
    await hub.accounts.register("robo", "correct horse battery")
    bot = Bot(hub, "robo", await new_token(hub, "robo", "correct horse battery"))
    await call(bot.client.account.upgrade_to_bot)
    events = await bot.events()  # online: it can be challenged

    alice = Seat(await open_page("alice"), "alice")
    await alice.register()
    page = alice.page
    online = page.locator('ul.players li[data-player="robo"]')
    await expect(online.locator(".bot-title")).to_have_text("BOT", timeout=WAIT_MS)
    await expect(online).to_contain_text("BOT robo online")
    form = "form.seek-form"
    await page.select_option(f"{form} select[name=variant]", "minishogi")
    await page.select_option(f"{form} select[name=kind]", "fischer")
    await page.fill(f"{form} input[name=base_min]", "5")
    await page.fill(f"{form} input[name=inc]", "0")
    await page.select_option(f"{form} select[name=colour]", "first")
    await online.locator("button.challenge-player").click()
    await expect(page.locator(".challenge")).to_contain_text("You challenge robo")
    await shots(page, "bot-lobby")

    challenge = (await events.next("challenge"))["challenge"]
    assert (challenge["challenger"]["name"], challenge["variant"]["key"]) == ("alice", "minishogi")
    assert challenge["color"] == "white"  # the challenger's side (as lichess says it): alice first
    await call(bot.client.bots.accept_challenge, challenge["id"])
    game_id = (await events.next("gameStart"))["game"]["gameId"]
    await page.wait_for_selector(
        f'section.game[data-game="{game_id}"] .board-wrap', timeout=WAIT_MS
    )
    # The header: the bot's name with its title, above the board and in the heading.
    await expect(page.locator(".clock.top a.name")).to_contain_text("BOT robo")
    await expect(page.locator(".clock.top .bot-title")).to_have_text("BOT")
    await expect(page.locator(".clock.bottom .bot-title")).to_have_count(0)
    await expect(page.locator("section.game h2")).to_have_text("alice – BOT robo")

    stream = await bot.game(game_id)
    full = await stream.next("gameFull")
    assert full["white"]["name"] == "alice" and full["black"]["title"] == "BOT"
    for ply, uci in enumerate(MINI_MATE, start=1):
        if ply % 2:
            await alice.click_move(uci[:2], uci[2:])
        else:
            await call(bot.client.bots.make_move, game_id, uci)
        state = await stream.next(
            lambda e, n=ply: e["type"] == "gameState" and len(e["moves"].split()) == n
        )
        assert state["moves"].split() == MINI_MATE[:ply]
        await alice.wait_ply(ply)
    final = await stream.next(lambda e: e["type"] == "gameState" and e["status"] != "started")
    assert (final["status"], final["winner"]) == ("mate", "black")
    assert (await events.next("gameFinish"))["game"]["gameId"] == game_id
    await alice.wait_end("robo wins by checkmate")
    await shots(page, "bot-game")

    record = await api_json(hub, f"/api/games/{game_id}")
    assert record["second"] == {**record["second"], "name": "robo", "bot": True}
    assert "bot" not in record["first"] and record["plies"] == 4
    await page.click('nav a[href="/review"]')
    row = page.locator(f'table.games tr[data-game="{game_id}"]')
    await expect(row).to_contain_text("alice – BOT robo")
    await expect(row.locator(".bot-title")).to_have_count(1)
    await shots(page, "bot-review")

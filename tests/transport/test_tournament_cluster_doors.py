"""A tournament game created by the hub that runs the tournament, for players whose connections
are on another hub of a cluster (two in-process hubs on the real Redis and PostgreSQL): they
get the game as its snapshot only (the ``moved`` notice), and each door still shows it as a
game start — the Bot API's ``gameStart`` (berserk, unmodified), ICS's ``Creating`` line."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from bot_support import Bot, call, new_token
from ics_support import IcsClient
from support import create_database, drop_database, node_settings
from tournament_watch import Standings

from server.app import App
from server.cluster.node import ClusterDriver
from server.hub.identity import COMPUTER
from server.hub.tournament.values import TournamentSettings
from server.rules.time_control import Fischer


@pytest.fixture
async def database() -> AsyncIterator[str]:
    url = await create_database("tournament_doors")
    try:
        yield url
    finally:
        await drop_database(url)


def node(database: str, name: str, prefix: str, *, ics: bool = False) -> App:
    settings = node_settings(name, database, prefix, lease_ttl_ms=3000, registrations_per_address_per_hour=100_000)
    return App(settings, ics_listen=0 if ics else None)


async def test_a_bot_and_an_ics_player_on_another_hub_get_their_game_as_a_start(
    database: str,
) -> None:
    prefix = f"tdoors-{uuid.uuid4().hex[:8]}:"
    a, b = node(database, "node-a", prefix), node(database, "node-b", prefix, ics=True)
    await a.start()
    await b.start()
    ics = None
    try:
        settings = TournamentSettings(
            name="Two doors",
            format="round_robin",
            variant="wildcastle",
            control=Fischer(60_000, 0),
            rated=False,
            start_when_joined=2,
            bots=True,
        )
        tid = await a.tournaments.create(None, settings)  # run by node-a
        standings = await Standings.start(a, tid)
        url = f"http://127.0.0.1:{b.port}"
        await b.accounts.register("dbot", "correct horse")
        bot = Bot(url, "dbot", await new_token(url, "dbot"))
        await call(bot.client.account.upgrade_to_bot)
        events = await bot.events()  # connected to node-b
        ics = await IcsClient.registered(b, "dics")
        joined = await call(bot.post, f"/api/roundrobin/{tid}/join")
        assert joined.status_code == 200, joined.text
        # node-a forgets node-b's connections (as before their presence reaches it): it pairs
        # players it does not see, so they are joined to the game by the ``moved`` notice.
        driver = a.driver
        assert isinstance(driver, ClusterDriver)
        await driver.remotes.drop_node("node-b")
        assert a.hub.online_players() == [COMPUTER]
        await ics.send(f"tjoin {tid}")  # the second entry starts it: node-a pairs them
        start = (await events.next("gameStart"))["game"]
        game = start["gameId"]
        assert start["tournamentId"] == tid and start["opponent"]["username"] == "dics"
        assert a.hub.room(game) is not None and b.hub.room(game) is None
        created = await ics.expect(
            r"^\{Game (\d+) \((\w+) vs\. (\w+)\) Creating unrated wild/1 match\.\}$"
        )
        number, white, black = created.groups()
        assert {white, black} == {"dbot", "dics"}
        await ics.send("resign")
        await ics.expect(rf"^\{{Game {number} \({white} vs\. {black}\) dics resigns\}}")
        finish = await events.next("gameFinish")
        assert finish["game"]["id"] == game
        final = await standings.until(lambda d: d["status"] == "finished")
        assert {r["name"]: r["score"] for r in final["standings"]} == {"dbot": 1.0, "dics": 0.0}
    finally:
        if ics is not None:
            await ics.close()
        await b.stop()
        await a.stop()

"""A whole tournament played to its end by every kind of entrant together (docs/tournaments.md,
"Proof"): websocket players, a bot driven by berserk (unmodified) through the Bot API, an ICS
client over TCP, and the computer played by a real engine worker; the final standings checked
against scores computed by hand."""

from __future__ import annotations

import asyncio

from bot_support import Bot, StreamReader, call, make_bot
from ics_support import IcsClient
from tournament_watch import Standings
from worker_support import StartWorker
from ws_support import Client, OpenClient, StartApp

from server.hub.tournament.values import TournamentSettings
from server.rules.time_control import Fischer

GAMES_EACH = 4
"""A round robin of five: five rounds, each entrant plays four games and sits one out."""
WAIT_S = 60.0
"""Longest wait for one's next game (the others' games and the computer's moves first)."""


def human_winner(white: str, black: str) -> str:
    """Between two humans the name that sorts first wins."""
    return min(white, black)


async def ws_player(client: Client, name: str) -> None:
    """Plays its games: against the computer it waits for one engine move, then resigns."""
    for _ in range(GAMES_EACH):
        start = await client.next(
            lambda m: m["t"] == "game_start" and "tournament" in m["d"], timeout=WAIT_S
        )
        game, side = start["d"]["game"], start["d"]["side"]
        opponent = start["d"]["opponent"]
        if opponent.get("computer"):
            snapshot = await client.next(lambda m, g=game: m["t"] == "game" and m["d"]["game"] == g)
            if snapshot["d"]["turn"] == side:
                move = sorted(snapshot["d"]["legal"])[0]
                await client.send("move", {"game": game, "ply": 1, "move": move})
            await client.next(
                lambda m, g=game, s=side: (
                    m["t"] == "move" and m["d"]["game"] == g and m["d"]["side"] != s
                ),
                timeout=WAIT_S,
            )
            await client.send("resign", {"game": game})
        elif human_winner(name, opponent["name"]) != name:
            await client.send("resign", {"game": game})
        await client.next(lambda m, g=game: m["t"] == "end" and m["d"]["game"] == g)


async def bot_player(bot: Bot, events: StreamReader) -> None:
    """A berserk bot: resigns to the computer and to the names before its own."""
    for _ in range(GAMES_EACH):
        start = (await asyncio.wait_for(events.next("gameStart"), WAIT_S))["game"]
        game, opponent = start["gameId"], start["opponent"]["username"]
        if opponent == "Computer" or human_winner(bot.name, opponent) != bot.name:
            await call(bot.client.bots.resign_game, game)
        await events.next(lambda e, g=game: e.get("type") == "gameFinish" and e["game"]["id"] == g)


async def ics_player(client: IcsClient, name: str) -> None:
    """An ICS client: each pairing arrives as a match (``Creating``); it resigns where it loses."""
    for _ in range(GAMES_EACH):
        created = await client.expect(
            r"^\{Game (\d+) \((\w+) vs\. (\w+)\) Creating unrated wild/1 match\.\}$", WAIT_S
        )
        number, white, black = created.groups()
        opponent = black if white == name else white
        if opponent == "Computer" or human_winner(name, opponent) != name:
            await client.send("resign")
        await client.expect(rf"^\{{Game {number} \({white} vs\. {black}\) .*\}} (1-0|0-1)$", WAIT_S)


async def test_a_round_robin_of_every_door_and_the_computer(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    app = await start_app(ics=True)
    await start_worker(app)
    ann, dov = [await open_client(app, n) for n in ("ann", "dov")]
    for client, name in ((ann, "ann"), (dov, "dov")):
        assert (await client.register(name))["t"] == "welcome"
    bea = await make_bot(app, open_client, "bea")
    bea_events = await bea.events()
    cyd = await IcsClient.registered(app, "cyd")
    settings = TournamentSettings(
        name="Every door",
        format="round_robin",
        variant="wildcastle",
        control=Fischer(60_000, 0),
        rated=False,
        start_when_joined=5,
        bots=True,
        computer=True,
    )
    tid = await app.tournaments.create(None, settings)  # the computer is entered at once
    assert [row.name for row in await app.tournaments.standings(tid)] == ["Computer"]
    standings = Standings(app, tid)
    for client in (ann, dov):
        await client.ok("tournament_join", {"id": tid})
    joined = await call(bea.post, f"/api/roundrobin/{tid}/join")
    assert joined.status_code == 200, joined.text
    await cyd.send(f"tjoin {tid}")  # the fifth entry starts it
    await cyd.expect(rf"^You are in tournament {tid}\.$")
    players = [
        ws_player(ann, "ann"),
        ws_player(dov, "dov"),
        bot_player(bea, bea_events),
        ics_player(cyd, "cyd"),
    ]
    await asyncio.wait_for(asyncio.gather(*players), 4 * WAIT_S)
    final = await standings.until(lambda d: d["status"] == "finished")
    # By hand: the computer wins its four games; among the humans the earlier name wins
    # (ann 3, bea 2, cyd 1, dov 0); a round sat out scores nothing in a round robin.
    scores = {row["name"]: row["score"] for row in final["standings"]}
    assert scores == {"Computer": 4.0, "ann": 3.0, "bea": 2.0, "cyd": 1.0, "dov": 0.0}
    assert [row["rank"] for row in final["standings"]] == [1, 2, 3, 4, 5]
    whole = await app.tournaments.view(tid)
    pairings = whole["pairings"]
    assert len(pairings) == 10 and {p["round"] for p in pairings} == {1, 2, 3, 4, 5}
    assert len({frozenset((p["white"], p["black"])) for p in pairings}) == 10
    assert app.computer.played["wildcastle"] >= 2  # the engine moved in the games of ann, dov
    assert not app.computer.fallbacks

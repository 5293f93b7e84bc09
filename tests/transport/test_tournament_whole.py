"""A whole tournament played to its end by every kind of entrant together (docs/tournaments.md,
"Proof"): websocket players, a bot driven by berserk (unmodified) through the Bot API, an ICS
client over TCP, and the computer played by a real engine worker; the final standings checked
against scores computed by hand."""

from __future__ import annotations

import asyncio
from typing import Any

from bot_support import Bot, StreamReader, call, make_bot
from ics_support import IcsClient
from tournament_doors import ORDER, WAIT_S, bot_player, ics_player, ws_player
from tournament_watch import Standings, WallClock, app_history
from worker_support import StartWorker
from ws_support import Client, OpenClient, StartApp

from server.app import App
from server.hub.tournament.values import TournamentSettings
from server.rules.time_control import Fischer

Field = tuple[Client, Client, Bot, StreamReader, IcsClient]


async def entrants(app: App, open_client: OpenClient) -> Field:
    """ann and dov on the websocket, the bot bea (berserk), cyd on ICS: registered, online."""
    ann, dov = [await open_client(app, n) for n in ("ann", "dov")]
    for client, name in ((ann, "ann"), (dov, "dov")):
        assert (await client.register(name))["t"] == "welcome"
    bea = await make_bot(app, open_client, "bea")
    bea_events = await bea.events()
    cyd = await IcsClient.registered(app, "cyd")
    return ann, dov, bea, bea_events, cyd


async def enter(
    app: App, field: Field, settings: TournamentSettings, path: str
) -> tuple[str, Standings, list[Any]]:
    """Create the tournament (the computer entered at once), enter the four others through
    their doors (the bot on the HTTP ``path``: ``/api/swiss`` …; cyd's entry, the fifth, starts
    it); the tournament's id, its standings pushes, the players' coroutines (one per door)."""
    ann, dov, bea, bea_events, cyd = field
    tid = await app.tournaments.create(None, settings)
    assert [row.name for row in await app.tournaments.standings(tid)] == ["Computer"]
    standings = await Standings.start(app, tid)
    for client in (ann, dov):
        await client.ok("tournament_join", {"id": tid})
    joined = await call(bea.post, f"{path}/{tid}/join")
    assert joined.status_code == 200, joined.text
    await cyd.send(f"tjoin {tid}")
    await cyd.expect(rf"^You are in tournament {tid}\.$")
    return tid, standings, [ann, dov, bea, bea_events, cyd]


def settings_of(fmt: str, **more: Any) -> TournamentSettings:
    return TournamentSettings(
        name="Every door",
        format=fmt,  # type: ignore[arg-type]
        variant="wildcastle",
        control=Fischer(60_000, 0),
        rated=False,
        start_when_joined=5,
        bots=True,
        computer=True,
        **more,
    )


def dominance_points(view: Any, win: float) -> dict[str, float]:
    """Scores computed here from the games played: each game's winner is the one earlier in
    ``ORDER`` (checked against the stored result), ``win`` points a win, plus the byes."""
    names = {row["player"]: row["name"] for row in view["standings"]}
    points = {name: 0.0 for name in names.values()}
    for pairing in view["pairings"]:
        white, black = names[pairing["white"]], names[pairing["black"]]
        winner = min(white, black, key=ORDER.index)
        assert pairing["result"] == ("1-0" if winner == white else "0-1"), pairing
        points[winner] += win
    for bye in view["byes"]:
        points[names[bye["player"]]] += bye["points"]
    return points


async def play_until_finished(players: list[Any], standings: Standings) -> dict[str, Any]:
    ann, dov, bea, bea_events, cyd = players
    tasks = [
        asyncio.ensure_future(c)
        for c in (
            ws_player(ann, "ann", None),
            ws_player(dov, "dov", None),
            bot_player(bea, bea_events, None),
            ics_player(cyd, "cyd", None),
        )
    ]
    try:
        return await standings.until(lambda d: d["status"] == "finished")
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_round_robin_of_every_door_and_the_computer(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    app = await start_app(ics=True)
    await start_worker(app)
    field = await entrants(app, open_client)
    tid, standings, (ann, dov, bea, bea_events, cyd) = await enter(
        app, field, settings_of("round_robin"), "/api/roundrobin"
    )
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
    whole = await app_history(app, tid)
    pairings = whole["pairings"]
    assert len(pairings) == 10 and {p["round"] for p in pairings} == {1, 2, 3, 4, 5}
    assert len({frozenset((p["white"], p["black"])) for p in pairings}) == 10
    assert app.computer.played["wildcastle"] >= 2  # the engine moved in the games of ann, dov
    assert not app.computer.fallbacks


async def test_a_swiss_of_every_door_and_the_computer(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    app = await start_app(ics=True)
    await start_worker(app)
    field = await entrants(app, open_client)
    tid, standings, players = await enter(app, field, settings_of("swiss", rounds=3), "/api/swiss")
    final = await play_until_finished(players, standings)
    view = await app_history(app, tid)
    assert len(view["pairings"]) == 6 and len(view["byes"]) == 3  # 2 games and a bye a round
    assert len({bye["player"] for bye in view["byes"]}) == 3  # a bye at most once each
    scores = {row["name"]: row["score"] for row in final["standings"]}
    assert scores == dominance_points(view, 1.0)
    # The computer wins every game it plays and is never worse than second.
    assert scores["Computer"] >= 2.0 and final["standings"][0]["name"] in ("Computer", "ann")


async def test_an_arena_of_every_door_and_the_computer(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    clock = WallClock()
    app = await start_app(ics=True, app_options={"tournament_clock": clock})
    await start_worker(app)
    field = await entrants(app, open_client)
    settings = settings_of("arena", duration_ms=600_000, berserk=False)
    tid, standings, players = await enter(app, field, settings, "/api/tournament")
    ann, dov, bea, bea_events, cyd = players
    tasks = [
        asyncio.ensure_future(c)
        for c in (
            ws_player(ann, "ann", None),
            ws_player(dov, "dov", None),
            bot_player(bea, bea_events, None),
            ics_player(cyd, "cyd", None),
        )
    ]
    try:
        await standings.until(lambda d: sum(row["games"] for row in d["standings"]) >= 16)
        clock.now_ms += 600_000  # the arena's time is up
        await app.tournaments.tick(tid)
        final = await standings.until(lambda d: d["status"] == "finished")
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    view = await app_history(app, tid)
    names = {row["player"]: row["name"] for row in view["standings"]}
    counted = [p for p in view["pairings"] if p["result"] is not None]
    assert len(counted) >= 8
    # An arena scorer written here: win 2, loss 0; after two wins in a row a win counts double.
    expected = {name: 0 for name in names.values()}
    streak = dict.fromkeys(names.values(), 0)
    for pairing in counted:  # each player's games in the order played (one at a time)
        white, black = names[pairing["white"]], names[pairing["black"]]
        winner = min(white, black, key=ORDER.index)
        assert pairing["result"] == ("1-0" if winner == white else "0-1"), pairing
        expected[winner] += 4 if streak[winner] >= 2 else 2
        streak[winner] += 1
        streak[max(white, black, key=ORDER.index)] = 0
    scores = {row["name"]: row["score"] for row in final["standings"]}
    assert scores == expected
    assert any("Computer" in (names[p["white"]], names[p["black"]]) for p in counted)
    assert not app.computer.fallbacks

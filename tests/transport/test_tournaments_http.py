"""The tournament API's lichess subset driven by berserk (unmodified) against a live app
(docs/tournaments-api.md): bots create, list, join, play (their games arrive on their event
stream as gameStart), read the results and export the games and the TRF; a round robin on our
own paths; refusals in lichess's error shape that change nothing."""

from __future__ import annotations

import berserk
import pytest
from bot_support import Bot, StreamReader, call, make_bot
from tournament_watch import Standings, WallClock, games_played
from ws_support import OpenClient, StartApp

from server.app import App


async def bots(app: App, open_client: OpenClient, *names: str) -> list[tuple[Bot, StreamReader]]:
    found = []
    for name in names:
        bot = await make_bot(app, open_client, name)
        found.append((bot, await bot.events()))
    return found


async def test_bots_play_an_arena_through_berserk(
    start_app: StartApp, open_client: OpenClient
) -> None:
    clock = WallClock()
    app = await start_app(app_options={"tournament_clock": clock})
    (alpha, alpha_events), (beta, beta_events) = await bots(app, open_client, "alphabot", "betabot")
    created = await call(
        alpha.client.tournaments.create_arena,
        clockTime=1,
        clockIncrement=2,
        minutes=10,
        name="Bot cup",
        variant="wildcastle",
        rated=False,
        startDate=clock.now_ms + 60_000,
    )
    tid = created["id"]
    assert created["fullName"] == "Bot cup Arena" and created["system"] == "arena"
    assert created["clock"] == {"limit": 60, "increment": 2} and created["minutes"] == 10
    assert created["variant"]["key"] == "wildcastle" and created["status"] == 10
    assert created["createdBy"] == "alphabot" and created["nbPlayers"] == 0
    listed = await call(beta.client.tournaments.get)
    assert [t["id"] for t in listed["created"]] == [tid]
    assert listed["started"] == [] and listed["finished"] == []
    standings = await Standings.start(app, tid)
    await call(alpha.client.tournaments.join_arena, tid)
    await call(beta.client.tournaments.join_arena, tid)
    with pytest.raises(berserk.exceptions.ResponseError) as twice:
        await call(beta.client.tournaments.join_arena, tid)
    assert twice.value.status_code == 400
    assert "already in this tournament" in str(twice.value.cause["error"])
    # Before the start a withdraw leaves the list; a join comes back.
    await call(beta.client.tournaments.withdraw_arena, tid)
    left = await call(alpha.client.tournaments.get_tournament, tid)
    assert [p.get("withdraw") for p in left["standing"]["players"] if p["name"] == "betabot"] == [
        True
    ]
    await call(beta.client.tournaments.join_arena, tid)
    shown = await call(alpha.client.tournaments.get_tournament, tid)
    assert shown["nbPlayers"] == 2 and shown["isStarted"] is False
    assert all("withdraw" not in p for p in shown["standing"]["players"])
    assert {p["name"] for p in shown["standing"]["players"]} == {"alphabot", "betabot"}
    # The start time comes: the wave pairs the two bots, whose game starts on their streams.
    clock.now_ms += 60_000
    await app.tournaments.tick(tid)
    start = await alpha_events.next("gameStart")
    game_id = start["game"]["gameId"]
    assert start["game"]["tournamentId"] == tid and start["game"]["source"] == "arena"
    assert (await beta_events.next("gameStart"))["game"]["gameId"] == game_id
    loser = alpha if start["game"]["color"] == "white" else beta
    winner = beta if loser is alpha else alpha
    await call(loser.client.bots.resign_game, game_id)
    await standings.until(lambda d: games_played(d) == 2)
    # Once started, a withdraw is a break (paused, points kept); a join resumes.
    await call(winner.client.tournaments.withdraw_arena, tid)
    paused = await standings.until(lambda d: any(r["status"] == "paused" for r in d["standings"]))
    assert [r["name"] for r in paused["standings"] if r["status"] == "paused"] == [winner.name]
    await call(winner.client.tournaments.join_arena, tid)
    await standings.until(lambda d: all(r["status"] == "active" for r in d["standings"]))
    # Time is up: the arena ends (the second wave's game, unfinished, does not count).
    clock.now_ms += 600_000
    await app.tournaments.tick(tid)
    await standings.until(lambda d: d["status"] == "finished")
    results = list(await call(lambda: list(alpha.client.tournaments.stream_results(tid))))
    assert [(r["rank"], r["username"], r["score"]) for r in results] == [
        (1, winner.name, 2),
        (2, loser.name, 0),
    ]
    assert all(r["rating"] == 1500 and isinstance(r["performance"], int) for r in results)
    sheets = list(
        await call(lambda: list(alpha.client.tournaments.stream_results(tid, sheet=True)))
    )
    assert sheets[0]["sheet"]["scores"] == "2"
    pgns = await call(lambda: list(alpha.client.tournaments.export_arena_games(tid, as_pgn=True)))
    assert len(pgns) == 1
    assert '[Event "Bot cup Arena"]' in pgns[0] and '[Round "1"]' in pgns[0]
    assert f'[GameId "{game_id}"]' in pgns[0] and f'[TournamentId "{tid}"]' in pgns[0]
    # berserk's default asks for NDJSON: lichess's game JSON, one game a line.
    (exported,) = await call(lambda: list(alpha.client.tournaments.export_arena_games(tid)))
    assert exported["id"] == game_id and exported["tournament"] == tid
    assert exported["status"] == "resign" and exported["variant"] == "wildcastle"
    assert exported["winner"] == ("black" if loser is alpha else "white")
    assert {exported["players"][c]["user"]["name"] for c in ("white", "black")} == {
        "alphabot",
        "betabot",
    }
    assert exported["clock"] == {"initial": 60_000, "increment": 2_000}
    finished = await call(beta.client.tournaments.get)
    assert [t["id"] for t in finished["finished"]] == [tid]
    final = await call(beta.client.tournaments.get_tournament, tid)
    assert final["isFinished"] is True and final["winner"]["name"] == winner.name
    # A paused or finished tournament refuses a join; nothing changed.
    with pytest.raises(berserk.exceptions.ResponseError) as late:
        await call(alpha.client.tournaments.join_arena, tid)
    assert late.value.status_code == 400
    assert [
        r["score"] for r in await call(lambda: list(alpha.client.tournaments.stream_results(tid)))
    ] == [2, 0]


async def test_bots_play_a_swiss_through_berserk(
    start_app: StartApp, open_client: OpenClient
) -> None:
    clock = WallClock()
    app = await start_app(app_options={"tournament_clock": clock})
    (alpha, alpha_events), (beta, beta_events) = await bots(app, open_client, "swissa", "swissb")
    created = await call(
        alpha.client.tournaments.create_swiss,
        "friends-club",
        clockLimit=60,
        clockIncrement=0,
        nbRounds=1,
        name="Mini cup",
        variant="minishogi",
        rated=False,
        startsAt=clock.now_ms + 60_000,
    )
    tid = created["id"]
    assert created["teamId"] == "friends-club" and created["nbRounds"] == 1
    assert created["variant"] == "minishogi" and created["status"] == "created"
    assert created["clock"] == {"limit": 60, "increment": 0}
    # The id of a Swiss is no arena's.
    with pytest.raises(berserk.exceptions.ResponseError) as not_arena:
        await call(alpha.client.tournaments.get_tournament, tid)
    assert not_arena.value.status_code == 404
    standings = await Standings.start(app, tid)
    await call(alpha.client.tournaments.join_swiss, tid)
    await call(beta.client.tournaments.join_swiss, tid)
    info = await call(beta.client.tournaments.get_swiss, tid)
    assert info["nbPlayers"] == 2 and info["round"] == 0
    clock.now_ms += 60_000
    await app.tournaments.tick(tid)
    start = await alpha_events.next("gameStart")
    game_id = start["game"]["gameId"]
    assert (await beta_events.next("gameStart"))["game"]["gameId"] == game_id
    loser = alpha if start["game"]["color"] == "white" else beta
    winner = beta if loser is alpha else alpha
    await call(loser.client.bots.resign_game, game_id)
    await standings.until(lambda d: d["status"] == "finished")
    results = await call(lambda: list(beta.client.tournaments.stream_swiss_results(tid)))
    assert [(r["rank"], r["username"], r["points"]) for r in results] == [
        (1, winner.name, 1.0),
        (2, loser.name, 0.0),
    ]
    assert results[0]["performance"] == 1500 + 400 and "buchholz_cut1" in results[0]["tieBreaks"]
    trf = await call(alpha.client.tournaments.export_swiss_trf, tid)
    assert trf.startswith("012 Mini cup") and "XXR 1" in trf
    assert sum(1 for line in trf.splitlines() if line.startswith("001 ")) == 2
    pgns = await call(lambda: list(alpha.client.tournaments.export_swiss_games(tid, as_pgn=True)))
    assert len(pgns) == 1 and '[Event "Mini cup"]' in pgns[0] and '[Round "1"]' in pgns[0]


async def test_a_round_robin_on_our_paths_and_refusals_that_change_nothing(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    (alpha, _), (beta, _) = await bots(app, open_client, "rrbota", "rrbotb")
    made = await call(
        alpha.post,
        "/api/roundrobin",
        data={
            "name": "Dai table",
            "variant": "daishogi",
            "clock.limit": "600",
            "clock.byoyomi": "30",
            "clock.periods": "1",
            "double": "true",
            "startWhenJoined": "3",
            "password": "sesame",
            "conditions.bots": "true",
        },
    )
    assert made.status_code == 200, made.text
    view = made.json()
    tid = view["id"]
    assert view["system"] == "roundRobin" and view["double"] is True
    assert view["clock"] == {"limit": 600, "increment": 0, "byoyomi": 30, "periods": 1}
    assert view["private"] is True and "startsAt" not in view
    base = f"/api/roundrobin/{tid}"
    wrong = await call(beta.post, f"{base}/join", data={"password": "open"})
    assert wrong.status_code == 400 and wrong.json() == {"error": "Wrong tournament password."}
    assert (await call(beta.post, f"{base}/join", data={"password": "sesame"})).status_code == 200
    shown = await call(beta.session.get, f"http://127.0.0.1:{app.port}{base}", timeout=10)
    assert shown.json()["nbPlayers"] == 1 and shown.json()["nbRounds"] == 0
    # Refusals in lichess's shape, nothing changed: a bad form, someone else's entry, an
    # unknown tournament, a Swiss path for a round robin, a join without a token.
    bad = await call(alpha.post, "/api/roundrobin", data={"variant": "chess"})
    assert bad.status_code == 400 and bad.json()["error"].startswith("variant:")
    not_in = await call(alpha.post, f"{base}/withdraw")
    assert not_in.status_code == 400 and not_in.json() == {
        "error": "You are not in this tournament."
    }
    unknown = await call(alpha.post, "/api/roundrobin/NoSuchOne1/join")
    assert unknown.status_code == 404 and unknown.json() == {"error": "No such round robin"}
    other = await call(alpha.post, f"/api/swiss/{tid}/join")
    assert other.status_code == 404
    anonymous = await call(
        beta.session.post, f"http://127.0.0.1:{app.port}{base}/join", headers={"Authorization": ""}
    )
    assert anonymous.status_code == 401
    humans_only = await call(
        alpha.post,
        "/api/roundrobin",
        data={
            "variant": "spartan",
            "clock.limit": "60",
            "clock.increment": "0",
            "conditions.bots": "false",
        },
    )
    no_bots = f"/api/roundrobin/{humans_only.json()['id']}/join"
    refused = await call(beta.post, no_bots)
    assert refused.status_code == 400
    assert refused.json() == {"error": "Bots may not enter this tournament."}
    results = await beta.raw(f"{base}/results")
    assert (await results.next())["username"] == "rrbotb"
    trf = await call(alpha.session.get, f"http://127.0.0.1:{app.port}/roundrobin/{tid}.trf")
    assert trf.status_code == 200 and trf.text.startswith("012 Dai table")
    listed = await call(alpha.session.get, f"http://127.0.0.1:{app.port}/api/tournament")
    assert listed.json()["created"] == []  # the arena list lists arenas only

"""A hub killed (SIGKILL) in the middle of a round robin, and of an arena and a Swiss, then
started again on its database: each tournament finishes with no result, pairing or score lost
(docs/tournaments.md, "Proof").

A real ``python -m server`` subprocess on PostgreSQL (the round robin: every door and the
computer playing; the arena and the Swiss, killed together: websocket players only); the new
process resumes the tournaments and their unfinished games; the players come back and play on
to the end; the stored events of before the kill are still the first ones."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from bot_support import Bot, call, new_token
from ics_support import IcsClient
from support import create_database, drop_database
from tournament_doors import WAIT_S, bot_player, ics_player, ws_player
from tournament_watch import ws_history
from worker_support import TEST_WORKER_KEY, WorkerProcess
from ws_support import Client, Msg, kill_server, start_server, stop_server

from server.store import Store
from server.store.migrate import upgrade_to_head
from server.store.tournament_codec import event_json


@pytest.fixture
async def database_url() -> AsyncIterator[str]:
    url = await create_database("tournament_crash")
    await upgrade_to_head(url)
    try:
        yield url
    finally:
        await drop_database(url)


async def stored_events(url: str, tid: str) -> list[Any]:
    store = Store.from_url(url, pool_size=1)
    try:
        return [event_json(e) for e in (await store.load_tournament(tid)).events]
    finally:
        await store.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def ics_login(port: int, name: str) -> IcsClient:
    client = await IcsClient.open(port)
    await client.send(name)
    await client.send("correct horse")
    await client.expect(rf"^\*\*\*\* Starting FICS session as {name} \*\*\*\*$")
    client.name = name
    await client.send("set style 12")
    await client.expect(r"^Style 12 set\.")
    return client


async def test_a_round_robin_of_every_door_survives_a_killed_hub(
    database_url: str, tmp_path: Path
) -> None:
    """ann and dov (websocket), the bot bea (berserk), cyd (ICS) and the computer (an engine
    worker process) in a round robin of five on ``python -m server``: the process is killed
    when dov's second game starts (dov loses every game, so it is unfinished: the round robin
    cannot end), other games of that round possibly in play; a new process on the database, a
    new worker; every player comes back (the websocket players by their sessions, the bot's
    event stream, a new ICS login), the running games are finished, and the round robin ends
    with the scores of a whole one (Computer 4, ann 3, bea 2, cyd 1, dov 0): no result,
    pairing or score lost."""
    ics_port = free_port()
    options = {"worker_keys": TEST_WORKER_KEY, "ics_port": str(ics_port)}
    process, port = await start_server(database_url, tmp_path, **options)
    worker = await WorkerProcess.start(port, tmp_path / "w1.log", "w1")
    tasks: list[asyncio.Future[None]] = []
    held = asyncio.Event()
    try:
        url = f"ws://127.0.0.1:{port}/ws"
        ann, dov, bot_account = [await Client.open(url, n) for n in ("ann", "dov", "bea")]
        for client, name in ((ann, "ann"), (dov, "dov"), (bot_account, "bea")):
            assert (await client.register(name))["t"] == "welcome"
        await bot_account.close()
        cyd_account = await Client.open(url, "cyd")
        await cyd_account.register("cyd")
        await cyd_account.close()
        tokens = {"ann": ann.token, "dov": dov.token}
        http = f"http://127.0.0.1:{port}"
        bea = Bot(http, "bea", await new_token(http, "bea"))
        await call(bea.client.account.upgrade_to_bot)
        bea_events = await bea.events()
        cyd = await ics_login(ics_port, "cyd")
        cup = {
            "name": "Crash cup",
            "format": "round_robin",
            "variant": "wildcastle",
            "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0},
            "start_when_joined": 5,
            "computer": True,
        }
        tid = (await ann.ok("tournament_create", cup))["tournament"]
        watcher = await Client.open(url, "watcher")
        await watcher.guest()
        await watcher.ok("tournament_watch", {"id": tid})
        for client in (ann, dov):
            await client.ok("tournament_join", {"id": tid})
        joined = await call(bea.post, f"/api/roundrobin/{tid}/join")
        assert joined.status_code == 200, joined.text
        await cyd.send(f"tjoin {tid}")  # the fifth entry starts it
        tasks = [
            asyncio.ensure_future(c)
            for c in (
                ws_player(ann, "ann", None),
                ws_player(dov, "dov", None, hold=(2, held)),
                bot_player(bea, bea_events, None),
                ics_player(cyd, "cyd", None),
            )
        ]
        # dov loses every game: the round robin cannot end while his second game waits.
        await asyncio.wait_for(held.wait(), WAIT_S)
        before = await ws_history(watcher, tid)
        assert before["status"] == "started"
        assert sum(p["result"] is not None for p in before["pairings"]) >= 1
        await kill_server(process)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await stop_server(process)
    events_before = await stored_events(database_url, tid)

    process, port = await start_server(database_url, tmp_path, **options)
    await worker.stop()
    worker = await WorkerProcess.start(port, tmp_path / "w2.log", "w2")
    tasks = []
    try:
        url = f"ws://127.0.0.1:{port}/ws"
        clients = {}
        for name, token in tokens.items():
            client = await Client.open(url, name)
            assert token is not None
            await client.resume(token)
            clients[name] = client
        watcher = await Client.open(url, "watcher")
        await watcher.guest()
        resumed = await ws_history(watcher, tid, "tournament_watch")
        for old, new in zip(before["pairings"], resumed["pairings"], strict=False):
            assert {**old, "result": new["result"]} == new  # the same pairing
            assert old["result"] in (None, new["result"])  # no result lost
        http = f"http://127.0.0.1:{port}"
        bea = Bot(http, "bea", bea.token)
        bea_events = await bea.events()  # the running game first, as gameStart
        cyd = await ics_login(ics_port, "cyd")  # the running game as Continuing
        dov_hello = clients["dov"].hello
        assert dov_hello is not None
        held_game = next(p for p in before["pairings"] if p["game"] == dov_hello["d"]["game"])
        assert held_game["result"] is None  # dov's second game, unfinished at the kill
        for name, client in clients.items():
            hello = client.hello
            assert hello is not None
            running = hello["d"]["game"]
            tasks.append(asyncio.ensure_future(ws_player(client, name, None, resume=running)))
        tasks.append(asyncio.ensure_future(bot_player(bea, bea_events, None)))
        tasks.append(asyncio.ensure_future(ics_player(cyd, "cyd", None)))
        final = await watcher.next(
            lambda m: m["t"] == "tournament_standings" and m["d"]["status"] == "finished",
            timeout=WAIT_S,
        )
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await worker.stop()
        await stop_server(process)
    scores = {row["name"]: row["score"] for row in final["d"]["standings"]}
    assert scores == {"Computer": 4.0, "ann": 3.0, "bea": 2.0, "cyd": 1.0, "dov": 0.0}
    view = final["d"]
    events_after = await stored_events(database_url, tid)
    assert events_after[: len(events_before)] == events_before
    assert len(events_after) > len(events_before) and view["status"] == "finished"


# --- an arena and a Swiss killed in the middle: websocket players only (cheap) ---------------


async def registered(url: str, names: list[str]) -> dict[str, Client]:
    """A websocket client for each name, registered (its session token kept for the restart)."""
    clients = {}
    for name in names:
        client = await Client.open(url, name)
        assert (await client.register(name))["t"] == "welcome"
        clients[name] = client
    return clients


async def resumed(url: str, old: dict[str, Client]) -> dict[str, Client]:
    """The same players on the restarted server, their sessions resumed by token."""
    clients = {}
    for name, client in old.items():
        assert client.token is not None
        again = await Client.open(url, name)
        await again.resume(client.token)
        clients[name] = again
    return clients


def running_game(client: Client) -> str | None:
    """The game a resumed session finds running (``hello.game``)."""
    assert client.hello is not None
    game: str | None = client.hello["d"]["game"]
    return game


async def watcher_of(url: str) -> Client:
    watcher = await Client.open(url, "watcher")
    await watcher.guest()  # logged in: not closed by the login timeout
    return watcher


async def pushed(watcher: Client, tid: str, match: Callable[[Msg], bool], timeout: float) -> Msg:
    """The first ``tournament_standings`` of ``tid`` (skipped ones first) that ``match``es."""
    message = await watcher.next(
        lambda m: m["t"] == "tournament_standings" and m["d"]["id"] == tid and match(m["d"]),
        timeout=timeout,
    )
    data: Msg = message["d"]
    return data


def is_finished(standings: Msg) -> bool:
    return bool(standings["status"] == "finished")


async def cancel_all(tasks: list[asyncio.Future[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def same_pairings_and_results(before: Msg, after: Msg) -> None:
    """Every pairing shown before the kill is there after it, in the same order, its result
    kept (a game unfinished then may have one now)."""
    assert len(after["pairings"]) >= len(before["pairings"])
    for old, new in zip(before["pairings"], after["pairings"], strict=False):
        assert {**old, "result": new["result"]} == new
        assert old["result"] in (None, new["result"])


def arena_length_s(start_s: float) -> int:
    """The arena's length (real time: the server is a real process), from how long the first
    start took (``start_s``; ~4 s on this shared 2-core machine, three times that under heavy
    load): the kill, the restart (about as long) and the third game's end must fit in it, or
    the third game would not count; the fourth game is still played at its end. The Swiss's
    last rounds are played in the time left."""
    return max(8, round(2 + 2.5 * start_s))


SWISS_PAIRS = [
    {frozenset(("cyd", "eve")), frozenset(("dov", "fay"))},
    {frozenset(("cyd", "dov")), frozenset(("eve", "fay"))},
    {frozenset(("cyd", "fay")), frozenset(("dov", "eve"))},
]
"""The Swiss's pairings by hand (FIDE Dutch; equal ratings, so pairing numbers by name: cyd 1,
dov 2, eve 3, fay 4; the name that sorts first wins): round 1 the top half against the bottom
half (1–3, 2–4); round 2 the score groups {cyd, dov} and {eve, fay}; round 3 the only pairing
without a rematch."""


async def test_an_arena_and_a_swiss_survive_a_killed_hub(
    database_url: str, tmp_path: Path
) -> None:
    """An arena (ann, bob) and a 3-round Swiss (cyd, dov, eve, fay) on ``python -m server``,
    websocket players, the loser (the name that sorts last) resigning. The process is
    SIGKILLed with both in the middle: the Swiss in round 2 (cyd–dov finished, eve–fay
    played: fay holds), the arena while ann and bob play their third game (after two results,
    ann 2 + 2 and on fire). A new process on the database resumes both: every pairing and
    result shown before is there, the running games are finished, and both go on to their
    ends. By hand: the Swiss's pairings (``SWISS_PAIRS``) and scores (cyd 3, dov 2, eve 1,
    fay 0); the arena's ann 2 + 2 + 4 (the fire kept across the kill) = 8, bob 0, their fourth
    game still played when time is up not counted (lichess's rule)."""
    started = time.monotonic()
    process, port = await start_server(database_url, tmp_path)
    arena_s = arena_length_s(time.monotonic() - started)
    tasks: list[asyncio.Future[None]] = []
    swiss_held, arena_held = asyncio.Event(), asyncio.Event()
    try:
        url = f"ws://127.0.0.1:{port}/ws"
        players = await registered(url, ["ann", "bob", "cyd", "dov", "eve", "fay"])
        control = {"kind": "fischer", "base_s": 60, "inc_s": 0}
        swiss = {"name": "Crash swiss", "format": "swiss", "variant": "wildcastle",
                 "tc": control, "rounds": 3, "start_when_joined": 4}
        arena = {"name": "Crash arena", "format": "arena", "variant": "wildcastle",
                 "tc": control, "duration_s": arena_s, "start_when_joined": 2}
        sid = (await players["cyd"].ok("tournament_create", swiss))["tournament"]
        aid = (await players["ann"].ok("tournament_create", arena))["tournament"]
        watcher = await watcher_of(url)
        for tid in (sid, aid):
            await watcher.ok("tournament_watch", {"id": tid})
        for name in ("cyd", "dov", "eve", "fay"):
            await players[name].ok("tournament_join", {"id": sid})
        tasks = [
            asyncio.ensure_future(ws_player(players[name], name, None))
            for name in ("cyd", "dov", "eve")
        ]
        tasks.append(asyncio.ensure_future(ws_player(players["fay"], "fay", None, hold=(2, swiss_held))))
        await asyncio.wait_for(swiss_held.wait(), WAIT_S)  # fay's round-2 game: not resigned
        await pushed(watcher, sid, lambda d: sum(r["games"] for r in d["standings"]) == 6, WAIT_S)
        # Then the arena (its clock starts now): bob resigns two games, holds the third.
        for name in ("ann", "bob"):
            await players[name].ok("tournament_join", {"id": aid})
        tasks.append(asyncio.ensure_future(ws_player(players["ann"], "ann", None)))
        tasks.append(asyncio.ensure_future(ws_player(players["bob"], "bob", None, hold=(3, arena_held))))
        await asyncio.wait_for(arena_held.wait(), WAIT_S)
        swiss_before = await ws_history(watcher, sid)
        arena_before = await ws_history(watcher, aid)
        await kill_server(process)
    finally:
        await cancel_all(tasks)
        await stop_server(process)
    assert swiss_before["status"] == arena_before["status"] == "started"
    assert [(p["round"], p["result"] is not None) for p in swiss_before["pairings"]] == [
        (1, True), (1, True), (2, True), (2, False)
    ]
    assert [p["result"] is not None for p in arena_before["pairings"]] == [True, True, False]
    sheets = {row["name"]: (row["sheet"], row["fire"]) for row in arena_before["standings"]}
    assert sheets == {"ann": ([2, 2], True), "bob": ([0, 0], False)}
    held_games = {"fay": swiss_before["pairings"][3]["game"], "ann": arena_before["pairings"][2]["game"]}
    held_games |= {"eve": held_games["fay"], "bob": held_games["ann"]}
    events_before = {tid: await stored_events(database_url, tid) for tid in (sid, aid)}

    process, port = await start_server(database_url, tmp_path)
    tasks = []
    try:
        url = f"ws://127.0.0.1:{port}/ws"
        players = await resumed(url, players)
        # Each player finds the game running at the kill (none for cyd and dov).
        assert {name: running_game(client) for name, client in players.items()} == {
            name: held_games.get(name) for name in players
        }
        watcher = await watcher_of(url)
        same_pairings_and_results(swiss_before, await ws_history(watcher, sid, "tournament_watch"))
        same_pairings_and_results(arena_before, await ws_history(watcher, aid, "tournament_watch"))
        fourth = asyncio.Event()
        for name, client in players.items():
            hold = (1, fourth) if name == "bob" else None
            play = ws_player(client, name, None, resume=held_games.get(name), hold=hold)
            tasks.append(asyncio.ensure_future(play))
        swiss_final = await pushed(watcher, sid, is_finished, WAIT_S)
        await asyncio.wait_for(fourth.wait(), WAIT_S)  # bob resigned the third; the fourth runs
        arena_final = await pushed(watcher, aid, is_finished, arena_s + WAIT_S)
        swiss_after = await ws_history(watcher, sid)
        arena_after = await ws_history(watcher, aid)
    finally:
        await cancel_all(tasks)
        await stop_server(process)

    scores = {row["name"]: row["score"] for row in swiss_final["standings"]}
    assert scores == {"cyd": 3.0, "dov": 2.0, "eve": 1.0, "fay": 0.0}
    names = {row["player"]: row["name"] for row in swiss_after["standings"]}
    pairs = [
        {frozenset((names[p["white"]], names[p["black"]])) for p in swiss_after["pairings"] if p["round"] == r}
        for r in (1, 2, 3)
    ]
    assert pairs == SWISS_PAIRS and swiss_after["byes"] == []
    assert all(p["result"] is not None for p in swiss_after["pairings"])

    sheets = {row["name"]: (row["sheet"], row["score"]) for row in arena_final["standings"]}
    assert sheets == {"ann": ([2, 2, 4], 8), "bob": ([0, 0, 0], 0)}
    fourth_game = arena_after["pairings"][3]
    assert len(arena_after["pairings"]) == 4 and fourth_game["result"] is None
    assert arena_after["playing"] == [fourth_game["game"]]  # still played, not counted

    for tid, before in events_before.items():
        after = await stored_events(database_url, tid)
        assert after[: len(before)] == before and after[-1]["type"] == "ended"

"""A hub killed (SIGKILL) in the middle of a round robin, then started again on its database:
the tournament finishes with no result, pairing or score lost (docs/tournaments.md, "Proof").

A real ``python -m server`` subprocess on PostgreSQL, every door and the computer playing; the
new process resumes the tournament and its unfinished games; the players come back and play on
to the end; the stored events of before the kill are still the first ones."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from bot_support import Bot, call, new_token
from ics_support import IcsClient
from support import create_database, drop_database
from tournament_doors import WAIT_S, bot_player, ics_player, ws_player
from worker_support import TEST_WORKER_KEY, WorkerProcess
from ws_support import Client, kill_server, start_server, stop_server

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
        before = await watcher.ok("tournament", {"id": tid})
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
        resumed = await watcher.ok("tournament_watch", {"id": tid})
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

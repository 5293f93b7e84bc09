"""A hub killed (SIGKILL) in the middle of a round robin, then started again on its database:
the tournament finishes with no result, pairing or score lost (docs/tournaments.md, "Proof").

A real ``python -m server`` subprocess on PostgreSQL; four websocket players; round 1 played,
round 2 half played (one result stored, one game unfinished), then the kill. The new process
resumes the tournament and the unfinished game; the players come back with their sessions and
play on to the end; the stored events of before the kill are still the first ones."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from support import create_database, drop_database
from ws_support import Client, Msg, kill_server, start_server, stop_server

from server.store import Store
from server.store.migrate import upgrade_to_head
from server.store.tournament_codec import event_json

NAMES = ["kra", "krb", "krc", "krd"]


@pytest.fixture
async def database_url() -> AsyncIterator[str]:
    url = await create_database("tournament_crash")
    await upgrade_to_head(url)
    try:
        yield url
    finally:
        await drop_database(url)


IDS: dict[str, str] = {}
"""Player id -> name (the pairings name players by id)."""


def loser(pairing: Msg) -> str:
    """The name that sorts last loses (so the scores are 3, 2, 1, 0)."""
    return max(IDS[pairing["white"]], IDS[pairing["black"]])


async def stored_events(url: str, tid: str) -> list[Any]:
    store = Store.from_url(url, pool_size=1)
    try:
        return [event_json(e) for e in (await store.load_tournament(tid)).events]
    finally:
        await store.close()


async def play_round(clients: dict[str, Client], view: Msg, number: int, skip: int = 0) -> None:
    """The loser of each game of round ``number`` resigns (the last ``skip`` games are left)."""
    games = [p for p in view["pairings"] if p["round"] == number]
    for pairing in games[: len(games) - skip]:
        await clients[loser(pairing)].ok("resign", {"game": pairing["game"]})


async def until_round(watcher: Client, tid: str, test: Any) -> Msg:
    while True:
        pushed = await watcher.next(
            lambda m: m["t"] == "tournament_standings" and m["d"]["id"] == tid, timeout=20
        )
        view = await watcher.ok("tournament", {"id": tid})
        if test(view):
            return view
        del pushed


async def test_a_round_robin_survives_a_killed_hub(database_url: str, tmp_path: Path) -> None:
    process, port = await start_server(database_url, tmp_path)
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        clients = {name: await Client.open(url, name) for name in NAMES}
        for name, client in clients.items():
            assert (await client.register(name))["t"] == "welcome"
        tokens = {name: client.token for name, client in clients.items()}
        for name, client in clients.items():
            assert client.player is not None
            IDS[str(client.player["id"])] = name
        first = clients[NAMES[0]]
        cup = {
            "name": "Crash cup",
            "format": "round_robin",
            "variant": "wildcastle",
            "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0},
            "start_when_joined": 4,
        }
        tid = (await first.ok("tournament_create", cup))["tournament"]
        await first.ok("tournament_watch", {"id": tid})
        for client in clients.values():
            await client.ok("tournament_join", {"id": tid})
        view = await until_round(first, tid, lambda v: v["round"] == 1 and len(v["pairings"]) == 2)
        await play_round(clients, view, 1)
        view = await until_round(first, tid, lambda v: v["round"] == 2)
        await play_round(clients, view, 2, skip=1)
        view = await until_round(
            first, tid, lambda v: sum(p["result"] is not None for p in v["pairings"]) == 3
        )
        before = view
        await kill_server(process)
    finally:
        await stop_server(process)
    events_before = await stored_events(database_url, tid)
    unfinished = next(p for p in before["pairings"] if p["result"] is None)

    process, port = await start_server(database_url, tmp_path)
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        clients = {}
        for name, token in tokens.items():
            client = await Client.open(url, name)
            assert token is not None
            await client.resume(token)
            clients[name] = client
        first = clients[NAMES[0]]
        resumed = await first.ok("tournament_watch", {"id": tid})
        # Nothing lost: the same pairings, results and scores as before the kill.
        assert resumed["pairings"] == before["pairings"]
        assert resumed["standings"] == before["standings"]
        for player in (unfinished["white"], unfinished["black"]):
            hello = clients[IDS[player]].hello
            assert hello is not None and hello["d"]["game"] == unfinished["game"]
        await clients[loser(unfinished)].ok("resign", {"game": unfinished["game"]})
        view = await until_round(first, tid, lambda v: v["round"] == 3)
        await play_round(clients, view, 3)
        final = await until_round(first, tid, lambda v: v["status"] == "finished")
    finally:
        await stop_server(process)
    assert {row["name"]: row["score"] for row in final["standings"]} == {
        "kra": 3.0,
        "krb": 2.0,
        "krc": 1.0,
        "krd": 0.0,
    }
    # The pairings of before the kill are the first ones still, their results unchanged.
    for old, new in zip(before["pairings"], final["pairings"], strict=False):
        assert {**old, "result": new["result"]} == new
        assert old["result"] in (None, new["result"])
    assert len({frozenset((p["white"], p["black"])) for p in final["pairings"]}) == 6
    events_after = await stored_events(database_url, tid)
    assert events_after[: len(events_before)] == events_before

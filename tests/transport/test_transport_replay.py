"""Replay after restarts: every client that reconnects with the last version it saw gets every
event after it — or one full snapshot, flagged as such — and ends up with the stored game.

A real ``python -m server`` on PostgreSQL is restarted twice mid-game (SIGTERM, or SIGKILL);
besides the two players' main connections, each player has a second connection and there are two
spectators, each of which drops out at a different point before a restart, missing events. After
the game has gone on, every connection comes back with its last version. Each client's move list,
rebuilt only from what it received, must equal the stored moves, and the versions it received
must form one gapless sequence between snapshots. After a graceful stop (SIGTERM) a client that
had seen everything gets the events after its version, no snapshot: the room's versions go on
where they stopped.

The same with the database restarted under a running server (a private PostgreSQL instance):
nothing is lost, no snapshot is needed.
"""

from __future__ import annotations

import random
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from room_view import RoomView
from support import create_database, drop_database
from ws_support import ROOT, Client, kill_server, start_server, stop_server

from server.rules import Game as RulesGame
from server.rules import get_variant
from server.store import Store
from server.store.migrate import upgrade_to_head

if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

from cluster import PostgresServer  # scripts/cluster.py

TC = {"kind": "fischer", "base_s": 600, "inc_s": 0}


def game_line(seed: int, plies: int) -> list[str]:
    """``plies`` random legal Mini-Shogi moves that do not end the game."""
    rng = random.Random(seed)
    while True:
        game, line = RulesGame(get_variant("minishogi")), []
        for _ in range(plies):
            line.append(game.play(rng.choice(game.legal_moves())).uci)
            if game.outcome() is not None:
                break
        else:
            return line


@dataclass
class ReplaySeat:
    """One connection slot of a player or spectator, across reconnections: its messages (all
    clients it had, in order) rebuild its view of the room."""

    name: str
    token: str | None = None
    client: Client | None = None
    received: list[dict[str, Any]] = field(default_factory=list)
    acks: list[dict[str, Any]] = field(default_factory=list)

    def view(self, game_id: str) -> RoomView:
        messages = self.received + ([] if self.client is None else self.client.seen)
        return RoomView(game_id).apply_all(messages)

    async def connect(self, url: str, game_id: str | None) -> Client:
        """(Re)connect: log in again with the session and join with the last version seen."""
        if self.client is not None:
            self.received += self.client.seen
            await self.client.close()
        client = self.client = await Client.open(url, self.name)
        if self.token is None:  # a spectator's first connection
            await client.register(self.name.capitalize())
            self.token = client.token
        else:
            welcome = await client.resume(self.token)
            assert welcome["t"] == "welcome", welcome
        if game_id is not None:
            version = self.view(game_id).version
            join: dict[str, Any] = {"game": game_id}
            if version is not None:
                join["v"] = version
            self.acks.append(await client.ok("join", join))
        return client

    async def drop(self) -> None:
        """Disconnect (the events from now on are missed)."""
        assert self.client is not None
        self.received += self.client.seen
        await self.client.close()
        self.client = None


async def play(seats: dict[str, ReplaySeat], game_id: str, ply: int, uci: str) -> None:
    """The side to move plays move ``ply``; wait until every connected seat saw it."""
    mover = seats["first" if ply % 2 else "second"].client
    assert mover is not None
    await mover.ok("move", {"game": game_id, "ply": ply, "move": uci})
    for seat in seats.values():
        if seat.client is not None:
            await seat.client.next(lambda m: m["t"] == "move" and m["d"]["ply"] == ply)


async def start_players(url: str) -> tuple[dict[str, ReplaySeat], str]:
    """Alice (first) and Bob register; each has a second connection; two spectators."""
    alice, bob = await Client.open(url, "alice"), await Client.open(url, "bob")
    await alice.register("Alice")
    await bob.register("Bob")
    seek = await alice.ok("seek", {"variant": "minishogi", "tc": TC, "colour": "first"})
    game_id = (await bob.ok("play", {"id": seek["seek"]}))["game"]
    for client in (alice, bob):
        await client.next(lambda m: m["t"] == "game" and m["d"]["game"] == game_id)
    seats = {
        "first": ReplaySeat("alice", alice.token, alice),
        "second": ReplaySeat("bob", bob.token, bob),
        "first2": ReplaySeat("alice2", alice.token),
        "second2": ReplaySeat("bob2", bob.token),
        "watcher1": ReplaySeat("carol"),
        "watcher2": ReplaySeat("dave"),
    }
    for key in ("first2", "second2", "watcher1", "watcher2"):
        await seats[key].connect(url, game_id)
    return seats, game_id


async def stored_moves(database_url: str, game_id: str) -> list[str]:
    async with Store.from_url(database_url, pool_size=1) as store:
        game = await store.get_game(game_id)
    assert game is not None
    return [move.uci for move in game.moves]


def check_views(seats: dict[str, ReplaySeat], game_id: str, stored: list[str]) -> None:
    for key, seat in seats.items():
        view = seat.view(game_id)
        assert view.moves == stored, f"{key}: {view.moves} != stored {stored}"
        assert view.breaks == [], f"{key}: versions not gapless: {view.breaks}"


@pytest.fixture
async def database_url() -> AsyncIterator[str]:
    url = await create_database("transport_test")
    await upgrade_to_head(url)
    try:
        yield url
    finally:
        await drop_database(url)


@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
async def test_every_client_rebuilds_the_stored_game_after_restarts(
    stop: str, database_url: str, tmp_path: Path
) -> None:
    line = game_line(seed=11, plies=10)
    process, port = await start_server(database_url, tmp_path)
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        seats, game_id = await start_players(url)
        drops = {2: "watcher1", 3: "first2", 6: "second2", 7: "watcher2"}  # after these plies
        restarts = (4, 8)  # after these plies
        for ply, uci in enumerate(line, start=1):
            await play(seats, game_id, ply, uci)
            if ply in drops:
                await seats[drops[ply]].drop()
            if ply in restarts:
                if stop == "sigterm":
                    await stop_server(process)
                else:
                    await kill_server(process)
                process, port = await start_server(database_url, tmp_path)
                url = f"ws://127.0.0.1:{port}/ws"
                for key in [k for k, seat in seats.items() if seat.client is not None]:
                    before = seats[key].view(game_id).version
                    await seats[key].connect(url, game_id)
                    snapshot = seats[key].acks[-1]["snapshot"]
                    # After a graceful stop the room's versions go on: a client that saw
                    # everything gets what followed (nothing is lost, no snapshot); after a
                    # crash the versions jump and it gets a snapshot, flagged.
                    assert snapshot is (stop == "sigkill"), (key, before, seats[key].acks[-1])
        for key in drops.values():
            await seats[key].connect(url, game_id)
            assert seats[key].acks[-1]["snapshot"] is True  # it missed events before a restart
        stored = await stored_moves(database_url, game_id)
        assert stored == line
        check_views(seats, game_id, stored)
    finally:
        await stop_server(process)


@pytest.fixture
async def private_pg(tmp_path: Path) -> AsyncIterator[PostgresServer]:
    server = PostgresServer(tmp_path)
    try:
        await server.start()
        yield server
    finally:
        await server.remove()


async def test_clients_miss_nothing_when_the_database_restarts_mid_game(
    private_pg: PostgresServer, tmp_path: Path
) -> None:
    database_url = await private_pg.create_database("hub")
    await upgrade_to_head(database_url)
    line = game_line(seed=5, plies=9)
    process, port = await start_server(database_url, tmp_path)
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        seats, game_id = await start_players(url)
        drops = {1: "watcher1", 3: "first2", 5: "second2", 7: "watcher2"}
        for ply, uci in enumerate(line, start=1):
            if ply == 3:
                await private_pg.restart()  # between two moves
            if ply == 6:
                # Down at the moment of a move: refused, nothing changes; then accepted.
                await private_pg.stop()
                mover = seats["second"].client
                assert mover is not None
                refused = await mover.request("move", {"game": game_id, "ply": ply, "move": uci})
                assert refused["d"]["code"] == "move_not_saved", refused
                await private_pg.start()
            await play(seats, game_id, ply, uci)
            if ply in drops:
                await seats[drops[ply]].drop()
            if ply == 8:
                await private_pg.kill()  # a crash of the database, with clients away
                await private_pg.start()
        for key in ("first2", "second2", "watcher1", "watcher2"):
            await seats[key].connect(url, game_id)
            assert seats[key].acks[-1]["snapshot"] is False  # replayed from the room's log
        stored = await stored_moves(database_url, game_id)
        assert stored == line
        check_views(seats, game_id, stored)
    finally:
        await stop_server(process)

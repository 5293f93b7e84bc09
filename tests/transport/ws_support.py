"""A websocket test client for the hub and helpers to play games through the real server."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import re
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from support import TcpForwarder, create_database, drop_database
from websockets.asyncio.client import ClientConnection, connect
from worker_support import TEST_WORKER_KEY

from server.app import App
from server.config import Settings

FAST_AUTH = {
    "argon2_time_cost": 1,
    "argon2_memory_kib": 8,
    "argon2_parallelism": 1,
    # Tests register many accounts from 127.0.0.1.
    "registrations_per_address_per_hour": 100_000,
}
ROOT = Path(__file__).resolve().parents[2]

StartApp = Callable[..., Awaitable[App]]
OpenClient = Callable[..., Awaitable["Client"]]


async def registered_headers(app: App, name: str) -> dict[str, str]:
    """``Authorization`` of a new registered player's session (the HTTP API's analysis
    requests are registered players' only)."""
    identity = await app.accounts.register(name, "correct horse battery")
    return {"Authorization": f"Bearer {identity.token}"}


def settings_for(database_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "port": 0,
        "ics_port": 0,
        "node_id": "test-node",
        "database_url": database_url,
        "log_level": "WARNING",
        "worker_keys": TEST_WORKER_KEY,
        "tournament_schedule": "",  # no recurring tournaments unless a test asks for them
        **FAST_AUTH,
    }
    values.update(overrides)
    return Settings(**values)


Msg = dict[str, Any]
TIMEOUT = 10.0
UNLIMITED_READS = {
    "review_reads_per_s": 100_000.0,
    "review_reads_burst": 100_000,
    "review_replays_per_s": 100_000.0,
    "review_replays_burst": 100_000,
}
"""Settings lifting the stored-game read limits, for tests that read thousands of times."""

MINI_FISCHER = {"kind": "fischer", "base_s": 60, "inc_s": 0}


class Client:
    """One websocket client: sends frames with ack ids, reads messages, keeps the ones it skipped.

    ``seen`` records every message received, in order (observers' streams are compared on it).
    """

    _acks = itertools.count(1)

    def __init__(self, ws: ClientConnection, name: str = "") -> None:
        self.ws = ws
        self.name = name
        self.backlog: list[Msg] = []
        self.seen: list[Msg] = []
        self.player: Msg | None = None
        self.token: str | None = None
        self.hello: Msg | None = None

    @classmethod
    async def open(cls, url: str, name: str = "", **kwargs: Any) -> Client:
        return cls(await connect(url, **kwargs), name)

    async def close(self) -> None:
        await self.ws.close()

    # --- sending ------------------------------------------------------------------------------

    async def send(self, t: str, d: dict[str, Any] | None = None, ack: Any = None) -> None:
        frame: dict[str, Any] = {"t": t}
        if d is not None:
            frame["d"] = d
        if ack is not None:
            frame["a"] = ack
        await self.ws.send(json.dumps(frame))

    async def request(self, t: str, d: dict[str, Any] | None = None) -> Msg:
        """Send with a fresh ack id; return the answer carrying it (``ack``, ``error`` …)."""
        ack = next(self._acks)
        await self.send(t, d, ack)
        return await self.next(lambda m: m.get("a") == ack)

    async def ok(self, t: str, d: dict[str, Any] | None = None) -> Msg:
        """:meth:`request` that must be answered positively; returns the answer's payload."""
        answer = await self.request(t, d)
        assert answer["t"] != "error", f"{self.name}: {t} {d} refused: {answer}"
        data: Msg = answer["d"]
        return data

    # --- receiving ----------------------------------------------------------------------------

    async def recv(self, timeout: float = TIMEOUT) -> Msg:
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        message: Msg = json.loads(raw)
        self.seen.append(message)
        return message

    async def next(
        self,
        match: str | Callable[[Msg], bool] | None = None,
        timeout: float = TIMEOUT,
    ) -> Msg:
        """The first message (skipped ones first) of type ``match`` or satisfying it."""
        if match is None:
            test: Callable[[Msg], bool] = lambda m: True  # noqa: E731
        elif isinstance(match, str):
            test = lambda m: m["t"] == match  # noqa: E731
        else:
            test = match
        for index, message in enumerate(self.backlog):
            if test(message):
                del self.backlog[index]
                return message
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            message = await self.recv(max(0.01, deadline - loop.time()))
            if test(message):
                return message
            self.backlog.append(message)

    async def settled(self) -> list[Msg]:
        """The backlog and everything that arrives before the answer to a ``ping`` sent now,
        taken out of the backlog: all the server had sent this connection when the ping came
        (it answers a ping at once, in order). The sentinel that proves "nothing (else) was
        sent", without waiting for a while and hoping."""
        ack = f"sentinel-{next(self._acks)}"
        await self.send("ping", None, ack)
        got, self.backlog = self.backlog, []
        while True:
            message = await self.recv()
            if message.get("a") == ack:
                assert message["t"] == "pong", (
                    f"{self.name}: the sentinel ping was refused: {message}"
                )
                return got
            got.append(message)

    async def quiet(self, seconds: float = 0.2) -> list[Msg]:
        """Everything that arrives within ``seconds`` (added to nothing: returned). Only to read
        on until the server closes the connection: "nothing arrived" is :meth:`settled`'s."""
        got: list[Msg] = []
        try:
            while True:
                got.append(await self.recv(seconds))
        except TimeoutError:
            return got

    def drop_backlog(self) -> None:
        self.backlog.clear()

    # --- identity -----------------------------------------------------------------------------

    async def _identify(self, t: str, d: dict[str, Any] | None) -> Msg:
        answer = await self.request(t, d)
        if answer["t"] == "welcome":
            self.player = answer["d"]["player"]
            self.token = answer["d"]["token"]
            self.hello = await self.next("hello")
        return answer

    async def guest(self) -> Msg:
        return await self._identify("guest", None)

    async def register(self, name: str, password: str = "correct horse") -> Msg:
        return await self._identify("register", {"name": name, "password": password})

    async def login(self, name: str, password: str = "correct horse") -> Msg:
        return await self._identify("login", {"name": name, "password": password})

    async def resume(self, token: str) -> Msg:
        return await self._identify("resume", {"token": token})


class Game:
    """Two connected players of one started game, seen through their clients."""

    def __init__(self, game_id: str, first: Client, second: Client, snapshot: Msg) -> None:
        self.id = game_id
        self.first = first
        self.second = second
        self.legal: list[str] = snapshot["d"]["legal"]
        self.turn: str = snapshot["d"]["turn"]
        self.ply: int = snapshot["d"]["ply"]
        self.fen: str = snapshot["d"]["fen"]
        self.version: int = snapshot["v"]
        self.ended: Msg | None = None

    def mover(self) -> Client:
        return self.first if self.turn == "first" else self.second

    def other(self, client: Client) -> Client:
        return self.second if client is self.first else self.first

    async def play(self, uci: str) -> Msg:
        """The side to move plays ``uci``; waits for the ack and both players' ``move`` event."""
        mover = self.mover()
        ply = self.ply + 1
        ack = await mover.ok("move", {"game": self.id, "ply": ply, "move": uci})
        assert ack == {"game": self.id, "ply": ply}
        event = await mover.next(lambda m: m["t"] == "move" and m["d"]["ply"] == ply)
        seen = await self.other(mover).next(lambda m: m["t"] == "move" and m["d"]["ply"] == ply)
        assert seen == event
        self.legal, self.turn, self.ply = event["d"]["legal"], event["d"]["turn"], ply
        self.fen = event["d"]["fen"]
        self.version = event["v"]
        return event

    async def end(self) -> Msg:
        """Both players' ``end`` event (they must be equal)."""
        first = await self.first.next("end")
        second = await self.second.next("end")
        assert first == second
        self.ended = first
        return first


async def alice_and_bobby(app: App, open_client: OpenClient) -> tuple[Client, Client]:
    """Two registered players' clients: ``alice`` and ``bobby`` (password "correct horse")."""
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bobby")
    return alice, bob


async def start_game(
    seeker: Client,
    accepter: Client,
    variant: str = "minishogi",
    tc: dict[str, Any] | None = None,
    **seek: Any,
) -> Game:
    """``seeker`` seeks, ``accepter`` plays the seek; returns the started game."""
    answer = await seeker.ok("seek", {"variant": variant, "tc": tc or MINI_FISCHER, **seek})
    accepted = await accepter.ok("play", {"id": answer["seek"]})
    game_id = accepted["game"]
    sides: dict[str, Client] = {}
    snapshots: list[Msg] = []
    for client in (seeker, accepter):
        start = await client.next(lambda m: m["t"] == "game_start" and m["d"]["game"] == game_id)
        sides[start["d"]["side"]] = client
        snapshots.append(
            await client.next(lambda m: m["t"] == "game" and m["d"]["game"] == game_id)
        )
    assert snapshots[0]["d"]["fen"] == snapshots[1]["d"]["fen"]
    return Game(game_id, sides["first"], sides["second"], snapshots[0])


async def play_random(game: Game, rng: random.Random, max_plies: int) -> Msg | None:
    """Random legal moves (from the server's ``legal`` lists) until the game ends or
    ``max_plies`` moves; returns the ``end`` event if the game ended on the board."""
    for _ in range(max_plies):
        event = await game.play(rng.choice(game.legal))
        if not event["d"]["legal"]:
            return await game.end()
    return None


@asynccontextmanager
async def pg_behind_proxy() -> AsyncIterator[tuple[str, str, TcpForwarder]]:
    """A fresh PostgreSQL database reached through a :class:`TcpForwarder` (to cut it off):
    yields (the URL through the forwarder, the direct URL, the forwarder); dropped afterwards."""
    database = await create_database("transport_test")
    proxy = TcpForwarder.to(database)
    await proxy.start()
    try:
        yield proxy.url(database), database, proxy
    finally:
        await proxy.cut()
        await drop_database(database)


async def start_server(
    database_url: str, cwd: Path, **settings: str
) -> tuple[asyncio.subprocess.Process, int]:
    """Start ``python -m server`` in ``cwd`` on a free port; return it and its port once it
    listens. ``settings`` are more ``HUB_*`` variables (``reconnect_grace_s="1"`` …)."""
    env = {
        **os.environ,
        "HUB_PORT": "0",
        "HUB_ICS_PORT": "0",
        "HUB_DATABASE_URL": database_url,
        "HUB_ARGON2_TIME_COST": "1",
        "HUB_ARGON2_MEMORY_KIB": "8",
        "HUB_ARGON2_PARALLELISM": "1",
        "HUB_REGISTRATIONS_PER_ADDRESS_PER_HOUR": "100000",
        "PYTHONPATH": str(ROOT),
        **{f"HUB_{name.upper()}": value for name, value in settings.items()},
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", cwd=cwd, env=env, stderr=asyncio.subprocess.PIPE
    )
    assert process.stderr is not None
    lines: list[str] = []
    while True:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line, "server exited early:\n" + "".join(lines)
        lines.append(line)
        found = re.search(r"listening on ws://127\.0\.0\.1:(\d+)/ws", line)
        if found:
            # Keep draining stderr so the server never blocks on a full pipe.
            asyncio.get_running_loop().create_task(_drain(process))
            return process, int(found.group(1))


async def _drain(process: asyncio.subprocess.Process) -> None:
    assert process.stderr is not None
    while await process.stderr.readline():
        pass


async def kill_server(process: asyncio.subprocess.Process) -> None:
    """SIGKILL: no chance to flush anything."""
    process.send_signal(signal.SIGKILL)
    assert await asyncio.wait_for(process.wait(), 10) == -signal.SIGKILL


async def stop_server(process: asyncio.subprocess.Process) -> None:
    """SIGTERM (graceful shutdown), SIGKILL if it takes more than 20 s; nothing if it is gone."""
    if process.returncode is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(process.wait(), 20)
    except TimeoutError:
        process.kill()
        await process.wait()

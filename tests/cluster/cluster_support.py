"""Helpers of the cluster tests: a websocket client that survives its hub, scripted games.

The tests run real hub processes (``scripts/cluster.py``'s :class:`LocalCluster`) against the
real PostgreSQL and a private real ``redis-server``; nothing here fakes a server.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
from support import pg_dsn, poll
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from server.rules import Game, get_variant

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

from cluster import LocalCluster  # noqa: E402  (scripts/cluster.py)
from haproxy import HAProxy, haproxy_binary, haproxy_config  # noqa: E402
from processes import free_port  # noqa: E402

TIMEOUT = 15.0
"""Seconds a test waits for one expected message (machines running the suite may be loaded)."""
FISCHER = {"kind": "fischer", "base_s": 300, "inc_s": 0}
PASSWORD = "correct horse"

# Fast failure detection for the tests: leases and heartbeats of 3 s, Redis pings every 0.5 s.
HUB_ENV = {
    "HUB_LEASE_TTL_MS": "3000",
    "HUB_PRESENCE_TTL_MS": "3000",
    "HUB_BUS_PING_INTERVAL_S": "0.5",
    "HUB_BUS_BACKOFF_MAX_S": "0.5",
    "HUB_RECONNECT_GRACE_S": "60",
    "HUB_RATE_LIMIT_PER_S": "100",
    "HUB_RATE_LIMIT_BURST": "200",
    "HUB_ARGON2_TIME_COST": "1",
    "HUB_ARGON2_MEMORY_KIB": "8",
    "HUB_ARGON2_PARALLELISM": "1",
    "HUB_REGISTRATIONS_PER_ADDRESS_PER_HOUR": "100000",
    "HUB_LOG_LEVEL": "INFO",
}

Msg = dict[str, Any]
RETRYABLE = frozenset({"node_unavailable", "cluster_unavailable", "busy"})


async def stored_game(url: str, game_id: str) -> tuple[Msg, list[str]]:
    """A game's row (as a dict) and its stored moves, read straight from PostgreSQL."""
    connection = await asyncpg.connect(pg_dsn(url))
    try:
        row = await connection.fetchrow("SELECT * FROM games WHERE id = $1", game_id)
        moves = await connection.fetch(
            "SELECT uci FROM game_moves WHERE game_id = $1 ORDER BY ply", game_id
        )
    finally:
        await connection.close()
    assert row is not None, f"game {game_id} is not stored"
    return dict(row), [m["uci"] for m in moves]


async def finished_game(url: str, game_id: str) -> tuple[Msg, list[str]]:
    """:func:`stored_game` once the game's end is stored (it is written after the ``end``
    event goes out, and retried until it is)."""
    return await poll(
        lambda: stored_game(url, game_id),
        lambda stored: stored[0]["status"] in ("finished", "aborted"),
        TIMEOUT,
        interval=0.1,
    )


def scripted_game(seed: int, variant: str = "minishogi", max_plies: int = 200) -> list[str]:
    """A legal game to its end: random moves, except a move that ends the game at once."""
    rng = random.Random(seed)
    game = Game(get_variant(variant))
    moves: list[str] = []
    while game.outcome() is None and len(moves) < max_plies:
        legal = game.legal_moves()
        finishing = []
        for move in legal:
            game.play(move)
            if game.outcome() is not None:
                finishing.append(move)
            game.undo()
        move = finishing[0] if finishing else rng.choice(legal)
        game.play(move)
        moves.append(move)
    return moves


class Client:
    """A websocket client that can reconnect (to any URL) with its session token.

    ``seen`` keeps every message received, in order, across reconnections.
    """

    _acks = itertools.count(1)

    def __init__(self, name: str) -> None:
        self.name = name
        self.ws: ClientConnection | None = None
        self.token: str | None = None
        self.player: Msg | None = None
        self.hello: Msg | None = None
        self.backlog: list[Msg] = []
        self.seen: list[Msg] = []

    @classmethod
    async def register(cls, url: str, name: str) -> Client:
        client = cls(name)
        await client._open(url, "register", {"name": name, "password": PASSWORD})
        return client

    async def _open(self, url: str, kind: str, payload: Msg) -> None:
        self.ws = await connect(url, open_timeout=TIMEOUT)
        answer = await self.request(kind, payload)
        assert answer["t"] == "welcome", f"{self.name}: {kind} refused: {answer}"
        self.player = answer["d"]["player"]
        self.token = self.token or answer["d"]["token"]
        self.hello = await self.next("hello")

    async def reconnect(self, url: str) -> None:
        """A new socket (the old one is dropped), identified by the session token."""
        if self.ws is not None:
            await self.ws.close()
        self.backlog.clear()
        assert self.token is not None
        await self._open(url, "resume", {"token": self.token})

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def send(self, t: str, d: Msg | None = None, ack: Any = None) -> None:
        frame: Msg = {"t": t}
        if d is not None:
            frame["d"] = d
        if ack is not None:
            frame["a"] = ack
        assert self.ws is not None
        await self.ws.send(json.dumps(frame))

    async def request(self, t: str, d: Msg | None = None, timeout: float = TIMEOUT) -> Msg:
        ack = next(self._acks)
        await self.send(t, d, ack)
        return await self.next(lambda m: m.get("a") == ack, timeout)

    async def ok(self, t: str, d: Msg | None = None) -> Msg:
        answer = await self.request(t, d)
        assert answer["t"] != "error", f"{self.name}: {t} {d} refused: {answer}"
        data: Msg = answer["d"]
        return data

    async def retry(self, t: str, d: Msg | None = None, within: float = 30.0) -> Msg:
        """:meth:`request` until the answer is not a retryable error (node moving, Redis down)."""
        return await poll(
            lambda: self.request(t, d),
            lambda answer: answer["t"] != "error" or answer["d"]["code"] not in RETRYABLE,
            within,
            interval=0.2,
        )

    async def recv(self, timeout: float) -> Msg:
        assert self.ws is not None
        message: Msg = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self.seen.append(message)
        return message

    async def next(
        self, match: str | Callable[[Msg], bool] | None = None, timeout: float = TIMEOUT
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
            try:
                message = await self.recv(max(0.01, deadline - loop.time()))
            except TimeoutError:
                raise TimeoutError(f"{self.name}: no message matching {match!r}") from None
            if test(message):
                return message
            self.backlog.append(message)

    async def closed(self, timeout: float = TIMEOUT) -> bool:
        """Whether the server closes this socket within ``timeout`` (reading meanwhile)."""
        try:
            while True:
                await self.recv(timeout)
        except ConnectionClosed:
            return True
        except TimeoutError:
            return False


def move_events(client: Client, game_id: str) -> list[tuple[int, str]]:
    """(v, uci) of every move event of a game the client received, in arrival order."""
    return [
        (m["v"], m["d"]["uci"])
        for m in client.seen
        if m["t"] == "move" and m["d"].get("game") == game_id
    ]


async def pair(
    seeker: Client, taker: Client, variant: str = "minishogi", tc: Msg | None = None
) -> str:
    """``seeker`` seeks (as first player), ``taker`` accepts it from the registry; the game id."""
    posted = await seeker.ok("seek", {"variant": variant, "tc": tc or FISCHER, "colour": "first"})
    seek_id = posted["seek"]
    await poll(  # the registry is updated just after the seeker's ack
        lambda: taker.ok("sought"),
        lambda listed: any(seek["id"] == seek_id for seek in listed["seeks"]),
        TIMEOUT,
    )
    game_id: str = (await taker.ok("play", {"id": seek_id}))["game"]
    for client in (seeker, taker):
        start = await client.next("game_start")
        assert start["d"]["game"] == game_id
    return game_id


__all__ = [
    "FISCHER",
    "HUB_ENV",
    "TIMEOUT",
    "Client",
    "HAProxy",
    "LocalCluster",
    "finished_game",
    "free_port",
    "haproxy_binary",
    "haproxy_config",
    "move_events",
    "pair",
    "scripted_game",
    "stored_game",
]

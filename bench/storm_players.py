"""The reconnect storm's clients (``storm.py``, ``storm_cluster.py``): a login that resumes a
session (``resume``), the players of the running games (``GamePlayer``: random legal moves at a
think time, a drop and a re-join with the last version seen, a refused move sent again) and an
idle login, with the figures they gather (``StormStats``).
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

from load_clients import TC, decode, reconnect_failure
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

RETRY = frozenset(
    {"busy", "node_unavailable", "cluster_unavailable", "move_not_saved", "game_not_created"}
)
"""Refusals a player answers by trying again (as ``chaos.py``'s players)."""


@dataclass
class StormStats:
    logins_ms: list[float] = field(default_factory=list)
    """``resume`` sent → ``hello`` received, per storm login."""
    connects_ms: list[float] = field(default_factory=list)
    """TCP connect started → ``hello`` received, per storm login."""
    moves: list[tuple[float, float]] = field(default_factory=list)
    """(acknowledged at, monotonic; round trip ms) of every move of the running games."""
    trips: list[tuple[str, int, float, float]] = field(default_factory=list)
    """(game, ply, sent, acknowledged; ``perf_counter``) of the same moves, for ``--phases``."""
    rejoined: int = 0
    snapshots: int = 0
    moved_on_rejoin: int = 0
    """Re-joins answered with nothing new while the player had the move (it plays then)."""
    errors: dict[str, int] = field(default_factory=dict)
    last_login: float = 0.0

    def error(self, key: str) -> None:
        self.errors[key] = self.errors.get(key, 0) + 1


async def resume(url: str, token: str, stats: StormStats | None) -> tuple[ClientConnection, Any]:
    """Connect and log in with a session token; the connection and the ``hello`` payload."""
    started = time.perf_counter()
    ws = await connect(url, compression=None, max_size=None, open_timeout=120, ping_interval=None)
    sent = time.perf_counter()
    await ws.send(json.dumps({"t": "resume", "d": {"token": token}, "a": 1}))
    welcome = decode(await ws.recv())
    if welcome["t"] != "welcome":
        raise RuntimeError(f"resume refused: {welcome}")
    hello = decode(await ws.recv())
    assert hello["t"] == "hello", hello
    done = time.perf_counter()
    if stats is not None:
        stats.logins_ms.append(1000 * (done - sent))
        stats.connects_ms.append(1000 * (done - started))
        stats.last_login = time.monotonic()
    return ws, hello["d"]


class GamePlayer:
    """A registered player in a running game: plays random legal moves with a think time; at
    :attr:`drop_at` it drops its connection, resumes its session on a new one and re-joins
    its game with the last version it saw."""

    def __init__(self, url: str, token: str, rng: random.Random, think_ms: float) -> None:
        self.url, self.token, self.rng, self.think_ms = url, token, rng, think_ms
        self.ws: ClientConnection | None = None
        self.stats = StormStats()
        self.drop_at: float | None = None
        self.game: str | None = None
        self.side = ""
        self.v = 0
        self.legal: list[str] = []
        self.turn = ""
        self.ply = 0
        self.sent_at: float | None = None
        self.my_ply = 0
        self.ack = 1
        self.reconnect_on_close = False
        """Reconnect (through the balancer) when the connection is lost, as a player would:
        ``storm_cluster.py``, where a hub is killed."""
        self.acked: set[tuple[str, int, str]] = set()
        """(game, ply, move) of every acknowledged move (the chaos run's first invariant)."""
        self.last_move: tuple[str, int, str] | None = None
        self.joining = False
        self.last_ack_at = 0.0
        self.logins = 1
        self.recent: collections.deque[str] = collections.deque(maxlen=8)
        """The last messages received, in short (what a stalled game's players last saw)."""

    async def send(self, t: str, d: dict[str, Any]) -> None:
        assert self.ws is not None
        self.ack += 1
        await self.ws.send(json.dumps({"t": t, "d": d, "a": self.ack}))

    async def run(self, until: float, stats: StormStats) -> None:
        self.stats = stats
        while self.ws is None:
            try:
                self.ws, _ = await resume(self.url, self.token, None)
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError, RuntimeError) as e:
                if not self.reconnect_on_close:
                    raise
                stats.error("first " + reconnect_failure(e))  # through HAProxy: try again
                await asyncio.sleep(0.2)
        await self.send("seek", {"variant": "minishogi", "tc": TC})
        while time.monotonic() < until:
            timeout = None if self.drop_at is None else max(0.0, self.drop_at - time.monotonic())
            try:
                text = await asyncio.wait_for(self.ws.recv(), timeout)
            except TimeoutError:
                await self.reconnect()
                continue
            except ConnectionClosed:
                if not self.reconnect_on_close:
                    stats.error("connection closed by the hub")
                    return
                await self.reconnect_until_done()
                continue
            try:
                await self.on_message(text, until)
            except ConnectionClosed:
                if not self.reconnect_on_close:
                    raise
                await self.reconnect_until_done()
        await self.ws.close()

    async def reconnect_until_done(self) -> None:
        while True:
            try:
                await self.reconnect()
                return
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError, RuntimeError) as e:
                self.stats.error(reconnect_failure(e))
                await asyncio.sleep(0.2)

    async def reconnect(self) -> None:
        assert self.ws is not None
        await self.ws.close()
        self.ws, hello = await resume(self.url, self.token, self.stats)
        self.logins += 1
        self.drop_at = None
        self.sent_at = None  # a move in flight is settled by the replay
        game = hello.get("game")
        if game is None and self.reconnect_on_close and self.game is not None:
            game = self.game  # a game a dead hub held may not be taken over yet: join it anyway
        if game is not None and game == self.game:
            self.stats.rejoined += 1
            self.joining = True
            await self.send("join", {"game": game, "v": self.v})
        elif game is not None:  # paired while away: the snapshot says which side
            self.game, self.v = game, 0
            await self.send("join", {"game": game})
        else:  # the game ended while away
            self.game = None
            await self.send("seek", {"variant": "minishogi", "tc": TC})

    async def on_message(self, text: str | bytes, until: float) -> None:
        received_at = time.perf_counter()
        message = decode(text)
        t, d = message["t"], message["d"]
        v = message.get("v")
        self.recent.append(
            f"{t} v={v} g={d.get('game')} {d.get('code', '')}{d.get('turn', '')}"
            f"{d.get('ply', '')}{d.get('status', '')}"
        )
        if v is not None:
            if v <= self.v and t != "game":
                return  # a replayed event already applied
            self.v = v
        if t == "game_start":
            if self.last_move is not None and self.last_move[0] != d["game"]:
                # A move in flight in the game before was settled by its end. (Not so in the
                # same game: a takeover tells its players game_start again while a move may
                # be in flight; that one's answer is still to come.)
                self.sent_at = None
            self.game, self.side, self.v = d["game"], d["side"], 0
            return
        if t == "error":
            self.stats.error(d["code"])
            if self.joining and self.game is not None:
                if d["code"] in RETRY:  # the game is changing hands: ask again
                    await asyncio.sleep(0.2)
                    await self.send("join", {"game": self.game, "v": self.v})
                else:  # it ended meanwhile
                    self.joining, self.game = False, None
                    await self.send("seek", {"variant": "minishogi", "tc": TC})
                return
            if (
                self.game is None
                and self.sent_at is None
                and d["code"] in (*RETRY, "already_playing")
            ):
                # The seek was refused for now (its node unreachable; or a game started for
                # the player whose game_start never came, aborted after its first-move window):
                # seek again rather than sit without a game for ever.
                await asyncio.sleep(0.2 if d["code"] in RETRY else 2.0)
                if self.game is None:
                    await self.send("seek", {"variant": "minishogi", "tc": TC})
                return
            if d["code"] in RETRY and self.last_move is not None and self.sent_at is not None:
                # Refused for now (a game being taken over: node_unavailable, busy …): the
                # player tries again, and the round trip counts from the first try.
                await asyncio.sleep(0.2)
                game, ply, move = self.last_move
                await self.send("move", {"game": game, "ply": ply, "move": move})
                return
            if "state" in d and self.game is not None:
                self.legal, self.turn, self.ply = (
                    d["state"]["legal"],
                    d["state"]["turn"],
                    d["state"]["ply"],
                )
                self.sent_at = None
            else:
                return
        elif t == "ack":
            if self.joining and d.get("game") == self.game and "v" in d:
                # The re-join's answer, after its replay or snapshot: if the player has the
                # move (the one it was about to send when its hub died never arrived, so the
                # replay brought nothing new), it plays now; nothing else would wake it.
                self.joining = False
                if d.get("snapshot"):
                    self.stats.snapshots += 1
                if self.turn == self.side and self.sent_at is None:
                    self.stats.moved_on_rejoin += 1
                await self.play_if_my_turn(until)
                return
            self.joining = False
            if d.get("snapshot"):
                self.stats.snapshots += 1
            if self.sent_at is not None and d.get("ply") == self.my_ply:
                if self.last_move is not None:
                    self.acked.add(self.last_move)
                rtt = 1000 * (received_at - self.sent_at)
                self.last_ack_at = time.monotonic()
                self.stats.moves.append((self.last_ack_at, rtt))
                assert self.game is not None
                self.stats.trips.append((self.game, self.my_ply, self.sent_at, received_at))
                self.sent_at = None
            return
        elif t in ("game", "move") and d.get("game") == self.game:
            self.legal, self.turn, self.ply = d["legal"], d["turn"], d["ply"]
            if t == "game" and d.get("role") in ("first", "second"):
                self.side = d["role"]
            if t == "game" and d.get("status") not in (None, "created", "started"):
                # The snapshot of a game that ended while the player was away (no ``end``
                # event reaches it then): seek another rather than wait in it for ever.
                self.game, self.sent_at = None, None
                await self.send("seek", {"variant": "minishogi", "tc": TC})
                return
        elif t == "end" and d.get("game") == self.game:
            self.game, self.sent_at = None, None
            await self.send("seek", {"variant": "minishogi", "tc": TC})
            return
        else:
            return
        await self.play_if_my_turn(until)

    async def play_if_my_turn(self, until: float) -> None:
        if self.game is None or self.turn != self.side or self.sent_at is not None:
            return
        if not self.legal or time.monotonic() >= until:
            return
        if self.ply >= 300:
            await self.send("resign", {"game": self.game})
            return
        await self.think()
        if self.drop_at is not None and time.monotonic() >= self.drop_at:
            return  # drop first; the move is played after the re-join
        self.my_ply = self.ply + 1
        move = {"game": self.game, "ply": self.my_ply, "move": self.rng.choice(self.legal)}
        self.last_move = (self.game, self.my_ply, move["move"])
        self.ack += 1
        frame = json.dumps({"t": "move", "d": move, "a": self.ack})
        self.sent_at = time.perf_counter()
        assert self.ws is not None
        await self.ws.send(frame)

    async def think(self) -> None:
        if self.think_ms:
            await asyncio.sleep(self.rng.uniform(0, 2 * self.think_ms) / 1000)


async def idle_login(
    url: str, token: str, at: float, stats: StormStats, sockets: list[ClientConnection]
) -> None:
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    try:
        ws, _ = await resume(url, token, stats)
    except Exception as error:  # counted, not fatal: the storm's other logins go on
        stats.error(repr(error)[:60])
        return
    sockets.append(ws)

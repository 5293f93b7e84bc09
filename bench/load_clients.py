"""The clients of ``bench_load.py``: players, observers and echo clients, and what their
timings show (the round trip's parts outside the server, ``--phases``).

The clients are the measuring instrument: they run in the bench's own process, on one event
loop, and parse the server's frames with the fastest decoder installed.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

try:  # the clients are the instrument: parse the hub's frames with the fastest decoder there is
    from orjson import loads as decode
except ImportError:  # pragma: no cover
    from json import loads as decode  # type: ignore[assignment]

TC = {"kind": "fischer", "base_s": 3600, "inc_s": 0}


def percentile(values: Sequence[float], q: float, empty: float = float("nan")) -> float:
    """The ``q`` quantile of ``values`` (the nearest rank at or below it); ``empty`` if none."""
    if not values:
        return empty
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# ------------------------------------------------------------------ the echo server


async def open_many(
    url: str, count: int, batch: int = 200, login: bool = False
) -> list[ClientConnection]:
    """Open ``count`` websockets, ``batch`` at a time; with ``login``, each batch logs in as
    guests before the next opens (the hub closes connections that stay anonymous for 30 s)."""
    sockets: list[ClientConnection] = []
    for start in range(0, count, batch):
        opened = await asyncio.gather(
            *(
                # No client pings, like browsers: the server's keepalive is what is measured.
                connect(url, compression=None, max_size=None, open_timeout=60, ping_interval=None)
                for _ in range(min(batch, count - start))
            )
        )
        if login:
            await asyncio.gather(*(login_guest(ws) for ws in opened))
        sockets += opened
    return sockets


async def login_guest(ws: ClientConnection) -> None:
    await ws.send('{"t":"guest"}')
    welcome = decode(await ws.recv())
    assert welcome["t"] == "welcome", welcome
    hello = decode(await ws.recv())
    assert hello["t"] == "hello", hello


@dataclass
class Stats:
    rtts_ms: list[float] = field(default_factory=list)
    slow: list[tuple[float, float]] = field(default_factory=list)
    """(seconds into the measurement, round trip ms) of the round trips over 20 ms."""
    moves: int = 0
    all_moves: int = 0
    """Every acknowledged move, the ramp-up and the end of the run included."""
    games: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    moves_per_s: float = 0.0
    observed: int = 0
    """Move events the observers received in the window."""
    hub_cpu: float = 0.0
    """Share of one CPU the hub process used during the run."""
    client_cpu: float = 0.0
    """Share of one CPU this (client) process used during the run."""
    lag: dict[str, Any] = field(default_factory=dict)
    """The hub's loop-lag probe over the window (``hub_probe.Probe.dump_window``)."""
    connect_lag: dict[str, Any] = field(default_factory=dict)
    """The same over the connect phase and ramp-up, before the window."""
    trips: list[tuple[str, int, float, float]] = field(default_factory=list)
    """The measured moves: (game, ply, sent, acknowledged), ``time.perf_counter()`` readings
    (joined with the hub's own marks by ``--phases``: :func:`way_in_and_out`)."""

    async def stop_players(self, tasks: list[asyncio.Task[Any]]) -> None:
        """Wait up to 30 s for the players' tasks (told to stop), cancel the rest, count each
        one's error in :attr:`errors`."""
        done, pending = await asyncio.wait(tasks, timeout=30)
        for task in pending:
            task.cancel()
        for task in done:
            error = task.exception()
            if error is not None:
                key = repr(error)[:60]
                self.errors[key] = self.errors.get(key, 0) + 1


class Player:
    """One bench client: seeks, plays random legal moves with a think time, seeks again."""

    def __init__(
        self,
        ws: ClientConnection,
        rng: random.Random,
        think_ms: float,
        max_plies: int,
        stats: Stats,
        watch: asyncio.Queue[str] | None = None,
        gate: asyncio.Event | None = None,
    ) -> None:
        self.ws = ws
        self.watch = watch
        self.gate = gate
        """``--interleave``: moves are played only while it is set."""
        self.rng = rng
        self.think_ms = think_ms
        self.max_plies = max_plies
        self.stats = stats
        self.ack = 0
        self.measure_from = 0.0
        self.until = 0.0

    async def send(self, t: str, d: dict[str, Any]) -> int:
        await self.ws.send(self.frame(t, d))
        return self.ack

    def frame(self, t: str, d: dict[str, Any]) -> str:
        """The next frame's text (its ack id is the next one)."""
        self.ack += 1
        return json.dumps({"t": t, "d": d, "a": self.ack})

    async def run(self, start_at: float, measure_from: float, until: float) -> None:
        self.measure_from, self.until = measure_from, until
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        while time.monotonic() < until:
            await self.send("seek", {"variant": "minishogi", "tc": TC})
            await self.play_one(until)

    async def play_one(self, until: float) -> None:
        game = side = None
        legal: list[str] = []
        turn = "first"
        ply = 0
        sent_at: float | None = None
        my_move_ply = 0
        while True:
            text = await self.ws.recv()
            received_at = time.perf_counter()  # before decoding, as the echo's clients time it
            message = decode(text)
            t, d = message["t"], message["d"]
            if t == "game_start":
                game, side = d["game"], d["side"]
                if side == "first" and self.watch is not None:
                    self.watch.put_nowait(game)  # an observer joins the game
                continue
            if t == "error":
                self.stats.errors[d["code"]] = self.stats.errors.get(d["code"], 0) + 1
                if "state" in d and game is not None:  # resynchronise and try again
                    legal, turn, ply = d["state"]["legal"], d["state"]["turn"], d["state"]["ply"]
                    sent_at = None
                else:
                    continue
            elif t == "ack" and sent_at is not None and d.get("ply") == my_move_ply:
                self.stats.all_moves += 1
                # After the ramp-up and warm-up, and before every player resigns at once (the
                # end of the run: a burst of 1,000 game endings that no real server sees).
                gate_open = self.gate is None or self.gate.is_set()
                if self.measure_from <= time.monotonic() < self.until and gate_open:
                    rtt = (received_at - sent_at) * 1000
                    self.stats.rtts_ms.append(rtt)
                    self.stats.trips.append((str(game), my_move_ply, sent_at, received_at))
                    self.stats.moves += 1
                    if rtt > 20:
                        self.stats.slow.append((time.monotonic() - self.measure_from, rtt))
                sent_at = None
                continue
            elif t in ("game", "move") and d.get("game") == game:
                legal, turn, ply = d["legal"], d["turn"], d["ply"]
            elif t == "end" and d.get("game") == game:
                if side == "first":
                    self.stats.games += 1
                return
            else:
                continue
            if game is None or turn != side or sent_at is not None or not legal:
                continue
            if ply >= self.max_plies or time.monotonic() >= until:
                await self.send("resign", {"game": game})
                continue
            if self.think_ms:
                await asyncio.sleep(self.rng.uniform(0, 2 * self.think_ms) / 1000)
            while self.gate is not None and not self.gate.is_set():
                await self.gate.wait()
                if self.think_ms:  # think again: no burst of moves when the gate opens
                    await asyncio.sleep(self.rng.uniform(0, 2 * self.think_ms) / 1000)
            my_move_ply = ply + 1
            # Built before the clock starts, as the echo's clients send a frame built once.
            move = self.frame(
                "move", {"game": game, "ply": my_move_ply, "move": self.rng.choice(legal)}
            )
            sent_at = time.perf_counter()
            await self.ws.send(move)


class Observer:
    """One spectator: joins the next game a first player announces, follows it to its end,
    leaves, and joins the next one."""

    def __init__(self, ws: ClientConnection, watch: asyncio.Queue[str], stats: Stats) -> None:
        self.ws = ws
        self.watch = watch
        self.stats = stats

    async def run(self, measure_from: float, until: float) -> None:
        while time.monotonic() < until:
            game = await self.watch.get()
            await self.ws.send(json.dumps({"t": "join", "d": {"game": game}}))
            while True:
                message = decode(await self.ws.recv())
                d = message["d"]
                if message["t"] == "move" and d.get("game") == game:
                    if measure_from <= time.monotonic() < until:
                        self.stats.observed += 1
                elif message["t"] in ("end", "error") and d.get("game", game) == game:
                    break
            await self.ws.send(json.dumps({"t": "leave", "d": {"game": game}}))


async def echo_round_trips(url: str, clients: int, seconds: float, think_ms: float) -> list[float]:
    sockets = await open_many(url, clients)
    rtts: list[float] = []
    until = time.monotonic() + seconds
    frame = json.dumps({"t": "move", "d": {"game": "abcdefgh", "ply": 12, "move": "b2c3"}, "a": 1})

    async def loop(ws: ClientConnection, rng: random.Random) -> None:
        first = True
        while time.monotonic() < until:
            if think_ms:
                await asyncio.sleep(rng.uniform(0, 2 * think_ms) / 1000)
            start = time.perf_counter()
            await ws.send(frame)
            await ws.recv()
            if not first:  # the first one includes the commit echo's game row: a setup cost
                rtts.append((time.perf_counter() - start) * 1000)
            first = False

    await asyncio.gather(*(loop(ws, random.Random(i)) for i, ws in enumerate(sockets)))
    await asyncio.gather(*(ws.close() for ws in sockets))
    return rtts


# ------------------------------------------------------------------ runs


def print_phases(phases: dict[str, Any], trips: list[tuple[str, int, float, float]]) -> None:
    """``--phases``: the medians inside the hub, then the way in and out (:func:`way_in_and_out`)."""
    print(
        f"{'':10} inside the hub, median µs from a move frame to: "
        + ", ".join(f"{p} {us:.0f}" for p, us in phases.items() if p != "raw"),
        flush=True,
    )
    parts = way_in_and_out(trips, phases.get("raw", []))
    if parts:
        print(f"{'':10} the whole round trip, median µs: " + describe(parts), flush=True)


def way_in_and_out(
    trips: list[tuple[str, int, float, float]], raw: list[list[Any]], q: float | None = None
) -> dict[str, float]:
    """Join the clients' send and ack times with the hub's marks of the same moves (``raw`` of
    ``move_phases.py``; both are ``time.perf_counter()``, the system-wide monotonic clock):
    median µs of ``in`` (the client's send to the hub's ``data_received``: the kernel, and the
    hub's loop busy with other work), ``parse`` (to the frame's handler), ``hub`` (to every
    frame written), ``out`` (to the client's reading of the ack: the kernel, and the clients'
    loop) and ``rtt``, with ``moves``, how many were joined. With ``q``, each part's quantile
    ``q`` instead of its median (each part's own: they do not add up to the round trip's)."""
    marks = {(game, ply): rest for game, ply, *rest in raw}
    # RAW order: received, frame, queued, sent, committed, released, written.
    rows = [
        (m[0] - sent, m[1] - m[0], m[6] - m[1], acked - m[6], acked - sent)
        for game, ply, sent, acked in trips
        if (m := marks.get((game, ply))) is not None
    ]
    if not rows:
        return {}
    names = ("in", "parse", "hub", "out", "rtt")
    parts = {
        n: 1e6
        * (
            statistics.median(r[i] for r in rows)
            if q is None
            else percentile([r[i] for r in rows], q)
        )
        for i, n in enumerate(names)
    }
    return {**parts, "moves": float(len(rows))}


def describe(parts: dict[str, float]) -> str:
    return (
        ", ".join(f"{name} {value:.0f}" for name, value in parts.items() if name != "moves")
        + f" ({parts['moves']:.0f} moves)"
    )


class EchoClients:
    """``games`` open connections to an echo, timed in slices (``--interleave``). With
    ``timed`` (``--phases``), the commit echo answers with its own marks (``/timed``), kept in
    :attr:`marks`."""

    def __init__(self, sockets: list[ClientConnection], timed: bool = False) -> None:
        self.sockets = sockets
        self.timed = timed
        self.frame = json.dumps(
            {"t": "move", "d": {"game": "abcdefgh", "ply": 12, "move": "b2c3"}, "a": 1}
        )
        self.marks: list[tuple[float, float, float, float]] = []
        """(sent, the echo's handler got it, the echo sends the answer, answer read)."""

    @classmethod
    async def open(cls, url: str, games: int, timed: bool = False) -> EchoClients:
        clients = cls(await open_many(url + ("/timed" if timed else ""), games), timed)
        await clients.slice(0.2)  # the commit echo writes each connection's game row first
        clients.marks.clear()
        return clients

    async def slice(self, seconds: float, think_ms: float = 0.0) -> list[float]:
        until = time.monotonic() + seconds
        rtts: list[float] = []

        async def loop(ws: ClientConnection) -> None:
            while time.monotonic() < until:
                if think_ms:
                    await asyncio.sleep(random.uniform(0, 2 * think_ms) / 1000)
                    if time.monotonic() >= until:
                        break
                start = time.perf_counter()
                await ws.send(self.frame)
                answer = await ws.recv()
                end = time.perf_counter()
                rtts.append((end - start) * 1000)
                if self.timed:
                    echo = decode(answer)
                    self.marks.append((start, echo["rx"], echo["tx"], end))

        await asyncio.gather(*(loop(ws) for ws in self.sockets))
        return rtts

    def way_in_and_out(self) -> dict[str, float]:
        """Median µs: ``in`` (to the echo's handler), ``echo`` (its commit), ``out`` and
        ``rtt``, as :func:`way_in_and_out` for the hub."""
        if not self.marks:
            return {}
        rows = [(rx - sent, tx - rx, end - tx, end - sent) for sent, rx, tx, end in self.marks]
        names = ("in", "echo", "out", "rtt")
        parts = {n: 1e6 * statistics.median(r[i] for r in rows) for i, n in enumerate(names)}
        return {**parts, "moves": float(len(rows))}

    async def close(self) -> None:
        await asyncio.gather(*(ws.close() for ws in self.sockets), return_exceptions=True)


def reconnect_failure(error: BaseException) -> str:
    """How a reconnection failed, as counted in the storm's ``StormStats.errors``."""
    if isinstance(error, InvalidStatus):  # refused by HAProxy (503: no hub up) or the hub
        return f"reconnect failed: HTTP {error.response.status_code}"
    if isinstance(error, RuntimeError):
        return "reconnect failed: resume refused"
    return f"reconnect failed: {type(error).__name__}"

"""Bots on the Bot API under load: N bot accounts each hold an event stream and play Mini-Shogi
against each other through the HTTP API, while a few human pairs play on websockets and the
hub's stall probe watches the event loop.

    .venv/bin/python bench/bench_bots.py --bots 200 --seconds 30
    .venv/bin/python bench/bench_bots.py --bots 200 --seconds 30 --backend postgresql

Each pair of bots: one challenges the other (``POST /api/challenge/{user}``), the other accepts,
both open the game stream and, on their turn, post a random legal move (the rules engine in the
bench process replays ``gameState.moves``) after ``--think-ms``; after ``--max-plies`` the
first bot resigns, and the pair starts a new game.

The humans (``--human-pairs``, ``bot_humans.py``: ``bench_load.py``'s players, in a process of
their own) seek and play Mini-Shogi with a mean think time of ``--human-think-ms`` for the whole
run, whose phases are: the humans connect; the humans alone (``--seconds``); the bots register,
take a token, upgrade, open their event streams and start playing (``--warmup``); the bots play
(``--seconds``, measured); the bots leave (their tasks cancelled, streams closed); the humans
alone again (``--seconds``: the machine's drift shows as a difference between the two alone
phases). Reported for each phase: the humans' move round trip (the websocket move to its
``ack``, i.e. until the move is durable), and the probe's window (largest event-loop lag of
the hub, lags over 50 ms, collector pauses), with the hub's CPU; then the bots' moves and
move POST round trip (until the move is stored and acknowledged), and the probe's maximum over
the whole run, connections and logins included. Not run in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import checkout  # noqa: F401  (this checkout's server and tests/ on sys.path)
from load_clients import describe, percentile, print_phases, way_in_and_out
from processes import (
    ChildProcess,
    Process,
    cpu_seconds,
    probe_report,
    raise_fd_limit,
    start_hub,
)
from support import create_database, drop_database
from websockets.asyncio.client import connect

from server.rules import Game, get_variant

PASSWORD = "bench password"
FISCHER = {"clock.limit": "600", "clock.increment": "0", "variant": "minishogi"}


class Bench:
    def __init__(self, port: int, args: argparse.Namespace) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}/ws"
        self.args = args
        self.round_trips: list[float] = []
        self.moves = 0
        self.games = 0
        self.errors: dict[str, int] = {}
        self.measuring = False
        self.rng = random.Random(7)

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1

    async def make_bot(self, http: aiohttp.ClientSession, name: str) -> dict[str, str]:
        async with connect(self.ws_url) as ws:
            await ws.send(json.dumps({"t": "register", "d": {"name": name, "password": PASSWORD}}))
            welcome = json.loads(await ws.recv())
            assert welcome["t"] == "welcome", welcome
        async with http.post(
            f"{self.base}/api/token", data={"name": name, "password": PASSWORD}
        ) as answer:
            token = (await answer.json())["token"]
        headers = {"Authorization": f"Bearer {token}"}
        async with http.post(f"{self.base}/api/bot/account/upgrade", headers=headers) as answer:
            assert answer.status == 200, await answer.text()
        return headers

    async def events(
        self,
        http: aiohttp.ClientSession,
        headers: dict[str, str],
        inbox: asyncio.Queue[dict[str, Any]],
        opened: asyncio.Event,
    ) -> None:
        async with http.get(f"{self.base}/api/stream/event", headers=headers) as stream:
            opened.set()
            async for raw in stream.content:
                if raw.strip():
                    await inbox.put(json.loads(raw))

    async def play(
        self, http: aiohttp.ClientSession, headers: dict[str, str], game_id: str, me: str
    ) -> None:
        """Play one game from this bot's side until it ends (or resign at the ply limit)."""
        variant = get_variant("minishogi")
        game = Game(variant)  # the moves seen so far are played on it once each
        url = f"{self.base}/api/bot/game"
        async with http.get(f"{url}/stream/{game_id}", headers=headers) as stream:
            async for raw in stream.content:
                if not raw.strip():
                    continue
                event = json.loads(raw)
                state = event["state"] if event["type"] == "gameFull" else event
                if state.get("type") != "gameState" or state["status"] != "started":
                    continue
                moves = state["moves"].split()
                if (len(moves) % 2 == 0) != (me == "white"):
                    continue
                if len(moves) >= self.args.max_plies:
                    if me == "white":
                        async with http.post(f"{url}/{game_id}/resign", headers=headers):
                            pass
                    continue
                if moves[: game.ply] != game.moves:
                    game = Game(variant)  # not a continuation (a takeback): replay all
                for uci in moves[game.ply :]:
                    game.play(uci)
                choice = self.rng.choice(game.legal_moves())
                await asyncio.sleep(self.args.think_ms / 1000)
                started = time.perf_counter()
                async with http.post(f"{url}/{game_id}/move/{choice}", headers=headers) as answer:
                    await answer.read()
                    if answer.status != 200:
                        self.error(f"move {answer.status}")
                        continue
                if self.measuring:
                    self.round_trips.append(time.perf_counter() - started)
                    self.moves += 1

    async def pair(
        self,
        http: aiohttp.ClientSession,
        white: tuple[str, dict[str, str], asyncio.Queue[dict[str, Any]]],
        black: tuple[str, dict[str, str], asyncio.Queue[dict[str, Any]]],
    ) -> None:
        (_, white_headers, white_inbox), (black_name, black_headers, black_inbox) = white, black
        while True:
            async with http.post(
                f"{self.base}/api/challenge/{black_name}",
                data={**FISCHER, "color": "white"},
                headers=white_headers,
            ) as answer:
                made = await answer.json()
                if answer.status != 200:
                    self.error(f"challenge {answer.status}")
                    await asyncio.sleep(0.5)
                    continue
            while (event := await black_inbox.get())["type"] != "challenge" or event["challenge"][
                "id"
            ] != made["id"]:
                pass
            async with http.post(
                f"{self.base}/api/challenge/{made['id']}/accept", headers=black_headers
            ) as answer:
                await answer.read()
            while (event := await white_inbox.get())["type"] != "gameStart":
                pass
            game_id = event["game"]["gameId"]
            await asyncio.gather(
                self.play(http, white_headers, game_id, "white"),
                self.play(http, black_headers, game_id, "black"),
            )
            if self.measuring:
                self.games += 1


@dataclass
class Phase:
    """A stretch of the run: the human moves sent in it, the hub's probe window over it."""

    name: str
    start: float
    end: float
    window: dict[str, Any]
    hub_cpu: float
    """Share of one CPU the hub used."""
    bench_cpu: float
    """Share of one CPU this process (the bots' clients) used."""

    def human_moves(self, trips: list[list[Any]]) -> list[tuple[str, int, float, float]]:
        """The human moves (game, ply, sent, acknowledged) sent in this phase."""
        return [
            (game, ply, sent, acked)
            for game, ply, sent, acked in trips
            if self.start <= sent < self.end
        ]


class Timeline:
    """Cuts the run into phases; each ends with a probe window, so that the windows cover the
    whole run from the humans' first connection on."""

    def __init__(self, hub: Process) -> None:
        self.hub = hub
        self.phases: list[Phase] = []
        self.start = 0.0
        self.cpu = (0.0, 0.0)

    async def begin(self) -> None:
        await probe_report(self.hub, signal.SIGUSR1, "window")  # a new window starts now
        self.start = time.perf_counter()
        self.cpu = (cpu_seconds(self.hub.popen.pid), cpu_seconds(os.getpid()))

    async def close(self, name: str) -> Phase:
        window = await probe_report(self.hub, signal.SIGUSR1, "window")
        end = time.perf_counter()
        hub_cpu, bench_cpu = cpu_seconds(self.hub.popen.pid), cpu_seconds(os.getpid())
        seconds = end - self.start
        phase = Phase(
            name,
            self.start,
            end,
            window,
            (hub_cpu - self.cpu[0]) / seconds,
            (bench_cpu - self.cpu[1]) / seconds,
        )
        self.phases.append(phase)
        self.start, self.cpu = end, (hub_cpu, bench_cpu)
        return phase


async def start_humans(port: int, args: argparse.Namespace) -> ChildProcess:
    """The human pairs' process (``bot_humans.py``); finished, it answers every acknowledged
    move as [sent, acknowledged], its errors and its games."""
    return await ChildProcess.start(
        "the human pairs' process",
        str(Path(__file__).resolve().parent / "bot_humans.py"),
        str(port),
        str(args.human_pairs),
        str(args.human_think_ms),
        str(args.max_plies),
    )


def ms(values: list[float], q: float) -> str:
    return f"{percentile(values, q):.2f}" if values else "-"


def print_phase(phase: Phase, trips: list[list[Any]]) -> list[float]:
    moves = phase.human_moves(trips)
    human = [1000 * (acked - sent) for _, _, sent, acked in moves]
    window = phase.window
    print(
        f"  {phase.name} ({phase.end - phase.start:.0f} s): human moves {len(human)}, round trip "
        f"p50 {ms(human, 0.5)} ms, p99 {ms(human, 0.99)} ms, max {max(human, default=0):.1f} ms"
        f" | hub loop lag max {window['lag_max_ms']:.1f} ms, p99.9 {window['lag_p999_ms']:.1f} "
        f"ms, over 50 ms {window['lags_over_50ms']}, hub's own CPU between wake-ups at most "
        f"{window['busy_max_ms']:.1f} ms | CPU: hub {100 * phase.hub_cpu:.0f}%, bots' clients "
        f"{100 * phase.bench_cpu:.0f}%",
        flush=True,
    )
    if window.get("phases_us"):  # --phases: where the humans' round trips go
        print_phases(window["phases_us"], moves)
        tail = way_in_and_out(moves, window["phases_us"].get("raw", []), 0.99)
        if tail:
            print(f"{'':10} the whole round trip, p99 of each part, µs: " + describe(tail))
    return human


async def make_bots(
    bench: Bench, http: aiohttp.ClientSession, count: int
) -> tuple[
    list[tuple[str, dict[str, str], asyncio.Queue[dict[str, Any]]]], list[asyncio.Task[None]]
]:
    """Register, token and upgrade ``count`` bots; open their event streams."""
    bots: list[tuple[str, dict[str, str], asyncio.Queue[dict[str, Any]]]] = []
    for index in range(count):
        headers = await bench.make_bot(http, f"bot{index:04d}")
        bots.append((f"bot{index:04d}", headers, asyncio.Queue()))
    streams = []
    for _, headers, inbox in bots:
        opened = asyncio.Event()
        streams.append(asyncio.create_task(bench.events(http, headers, inbox, opened)))
        await opened.wait()
    return bots, streams


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each phase")
    parser.add_argument("--warmup", type=float, default=5.0, help="the bots' games, unmeasured")
    parser.add_argument("--think-ms", type=float, default=200.0, help="each bot's, fixed")
    parser.add_argument("--max-plies", type=int, default=40)
    parser.add_argument("--human-pairs", type=int, default=4)
    parser.add_argument(
        "--human-think-ms", type=float, default=100.0, help="mean (uniform from 0 to twice it)"
    )
    parser.add_argument(
        "--backend",
        choices=["sqlite", "postgresql"],
        default="sqlite",
        help="a fresh SQLite file, or a fresh database on the tests' PostgreSQL (dropped after)",
    )
    parser.add_argument("--database-url", default=None, help="instead of --backend")
    parser.add_argument(
        "--phases",
        action="store_true",
        help="where the humans' round trips go (move_phases.py; PostgreSQL only)",
    )
    args = parser.parse_args()
    if args.phases:
        os.environ["BENCH_PHASES"] = "1"  # the hub's probe (move_phases.py), inherited
    raise_fd_limit()
    load_before = os.getloadavg()[0]
    workdir = Path(tempfile.mkdtemp(prefix="bench-bots-"))
    fresh = args.database_url is None and args.backend == "postgresql"
    url = await create_database("bench_bots") if fresh else args.database_url
    url = url or f"sqlite+aiosqlite:///{workdir / 'hub.sqlite3'}"
    os.environ.update(
        HUB_ARGON2_TIME_COST="1",
        HUB_ARGON2_MEMORY_KIB="8",
        HUB_ARGON2_PARALLELISM="1",
        HUB_REGISTRATIONS_PER_ADDRESS_PER_HOUR="100000",
    )
    hub = await start_hub(url, workdir)
    humans: ChildProcess | None = None
    try:
        bench = Bench(hub.port, args)
        timeline = Timeline(hub)
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=None)
        ) as http:
            # The hub listens before it builds the rules' tables (seconds on a busy machine).
            async with http.get(
                f"{bench.base}/healthz", timeout=aiohttp.ClientTimeout(total=120)
            ) as health:
                assert health.status == 200
            # From here on every probe window counts: connections and logins included.
            await timeline.begin()
            humans = await start_humans(hub.port, args)
            await asyncio.sleep(2.0)  # the humans' first games start
            await timeline.close("humans connect")
            await asyncio.sleep(args.seconds)
            await timeline.close("humans alone")
            bots, streams = await make_bots(bench, http, args.bots)
            pairs = [
                asyncio.create_task(bench.pair(http, bots[i], bots[i + 1]))
                for i in range(0, len(bots) - 1, 2)
            ]
            await asyncio.sleep(args.warmup)
            await timeline.close(f"{args.bots} bots connect, streams, {args.warmup:.0f} s play")
            bench.measuring = True
            await asyncio.sleep(args.seconds)
            bench.measuring = False
            playing = await timeline.close(f"with {args.bots} bots playing")
            for task in [*pairs, *streams]:
                task.cancel()
            await asyncio.gather(*pairs, *streams, return_exceptions=True)
            await asyncio.sleep(2.0)  # the hub drops the bots' streams
            await timeline.close("bots leave")
            await asyncio.sleep(args.seconds)
            await timeline.close("humans alone again")
            played = await humans.finish()
            humans = None
        trips = played["trips"]
        phases = timeline.phases
        print(
            f"{args.bots} bots ({len(streams)} event streams, {len(pairs)} games at a time, "
            f"{args.think_ms:.0f} ms thought), {args.human_pairs} human pairs on websockets "
            f"({args.human_think_ms:.0f} ms mean thought), {args.seconds:.0f} s per phase, "
            f"database {url.split(':')[0]}, load average {load_before:.1f} before, "
            f"{os.getloadavg()[0]:.1f} after",
            flush=True,
        )
        human = {phase.name: print_phase(phase, trips) for phase in phases}
        elapsed = playing.end - playing.start
        bot_trips = bench.round_trips
        print(
            f"  bots while playing: moves {bench.moves} ({bench.moves / elapsed:.0f}/s), games "
            f"finished {bench.games}, move POST round trip p50 "
            f"{1000 * percentile(bot_trips, 0.5):.1f} ms, p99 "
            f"{1000 * percentile(bot_trips, 0.99):.1f} ms, max "
            f"{1000 * max(bot_trips, default=0):.1f} ms"
        )
        alone = human["humans alone"] + human["humans alone again"]
        with_bots = human[playing.name]
        print(
            f"  human move round trip, alone (both phases) -> with the bots playing: p50 "
            f"{ms(alone, 0.5)} -> {ms(with_bots, 0.5)} ms, p99 {ms(alone, 0.99)} -> "
            f"{ms(with_bots, 0.99)} ms"
        )
        worst = max(phases, key=lambda phase: phase.window["lag_max_ms"] or 0.0)
        collections = {
            g: max(phase.window["gc"][g]["max_ms"] for phase in phases) for g in ("0", "1", "2")
        }
        print(
            f"  hub stall probe over the whole run ({phases[-1].end - phases[0].start:.0f} s, "
            f"connect phases included): max lag {worst.window['lag_max_ms']:.1f} ms "
            f"({worst.name}), lags over 50 ms "
            f"{sum(phase.window['lags_over_50ms'] for phase in phases)}, longest collections "
            + ", ".join(f"gen {g} {pause:.1f} ms" for g, pause in collections.items())
        )
        print(f"  errors: bots {bench.errors or 'none'}, humans {played['errors'] or 'none'}")
    finally:
        if humans is not None:
            humans.kill()
        hub.stop()
        if fresh:
            await drop_database(url)


if __name__ == "__main__":
    asyncio.run(main())

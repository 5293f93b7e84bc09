"""Bots on the Bot API under load: N bot accounts each hold an event stream and play Mini-Shogi
against each other through the HTTP API, while the hub's stall probe watches the event loop.

    .venv/bin/python bench/bench_bots.py --bots 200 --seconds 30
    .venv/bin/python bench/bench_bots.py --database-url postgresql+asyncpg://postgres@127.0.0.1/bench

Each pair of bots: one challenges the other (``POST /api/challenge/{user}``), the other accepts,
both open the game stream and, on their turn, post a random legal move (the rules engine in the
bench process replays ``gameState.moves``) after ``--think-ms``; after ``--max-plies`` the
first bot resigns, and the pair starts a new game. Reported: moves, the move POST's round trip
(from the request to the 200, i.e. until the move is stored and acknowledged), and the probe's
window (largest event-loop lag of the hub, lags over 50 ms, collector pauses). Not run in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from load_clients import percentile
from processes import probe_report, raise_fd_limit, start_hub

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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--think-ms", type=float, default=200.0)
    parser.add_argument("--max-plies", type=int, default=40)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    raise_fd_limit()
    workdir = Path(tempfile.mkdtemp(prefix="bench-bots-"))
    url = args.database_url or f"sqlite+aiosqlite:///{workdir / 'hub.sqlite3'}"
    os.environ.update(
        HUB_ARGON2_TIME_COST="1", HUB_ARGON2_MEMORY_KIB="8", HUB_ARGON2_PARALLELISM="1"
    )
    hub = await start_hub(url, workdir)
    try:
        bench = Bench(hub.port, args)
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=None)
        ) as http:
            # The hub listens before it builds the rules' tables (seconds on a busy machine).
            async with http.get(
                f"{bench.base}/healthz", timeout=aiohttp.ClientTimeout(total=120)
            ) as health:
                assert health.status == 200
            bots = []
            for index in range(args.bots):
                headers = await bench.make_bot(http, f"bot{index:04d}")
                bots.append((f"bot{index:04d}", headers, asyncio.Queue()))
            streams = []
            for _, headers, inbox in bots:
                opened = asyncio.Event()
                streams.append(asyncio.create_task(bench.events(http, headers, inbox, opened)))
                await opened.wait()
            pairs = [
                asyncio.create_task(bench.pair(http, bots[i], bots[i + 1]))
                for i in range(0, len(bots) - 1, 2)
            ]
            await asyncio.sleep(args.warmup)
            await probe_report(hub, signal.SIGUSR1, "window")  # a new window starts now
            bench.measuring = True
            started = time.perf_counter()
            await asyncio.sleep(args.seconds)
            bench.measuring = False
            elapsed = time.perf_counter() - started
            window = await probe_report(hub, signal.SIGUSR1, "window")
            for task in [*pairs, *streams]:
                task.cancel()
            await asyncio.gather(*pairs, *streams, return_exceptions=True)
        trips = bench.round_trips
        print(
            f"{args.bots} bots ({len(streams)} event streams, {len(pairs)} games at a time), "
            f"{elapsed:.0f} s, database {url.split(':')[0]}"
        )
        print(
            f"  moves {bench.moves} ({bench.moves / elapsed:.0f}/s), games finished {bench.games}"
        )
        print(
            f"  move POST round trip: p50 {1000 * percentile(trips, 0.5):.1f} ms, "
            f"p99 {1000 * percentile(trips, 0.99):.1f} ms, max {1000 * max(trips, default=0):.1f} ms"
        )
        print(
            f"  hub stall probe: max lag {window['lag_max_ms']:.1f} ms, p99.9 "
            f"{window['lag_p999_ms']:.1f} ms, lags over 50 ms {window['lags_over_50ms']}, "
            f"gc {window['gc']}"
        )
        print(f"  errors {bench.errors or 'none'}")
    finally:
        hub.stop()


if __name__ == "__main__":
    asyncio.run(main())

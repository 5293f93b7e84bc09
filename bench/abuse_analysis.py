"""Analysis flood against one engine worker slot, while an honest player plays the computer.

    python bench/abuse_analysis.py [--attackers 20] [--anonymous 200] [--seconds 60]
                                   [--dai-games 8] [--plies 240] [--slots 1]

Starts the real hub (``bench/hub_probe.py``: ``python -m server`` with the loop-lag probe) on an
SQLite database seeded with ``--dai-games`` finished random Dai Shogi games of ``--plies``
moves (and Mini-Shogi games for the attackers' later requests), and ONE engine worker
(``python -m server.worker --slots 1``: the worst case, every analysis and every move on one
core). Then, for ``--seconds``:

* ``--attackers`` registered accounts (websocket) each flood ``analyse`` requests for the long
  Dai Shogi games: first at 10 s a position (refused: over the engine-time bound), then at the
  longest move time the bound allows (the first accepted per account; then one unfinished at a
  time and the daily quota refuse the rest), as fast as the connection's rate limit lets them;
* ``--anonymous`` requests without a login, half over the websocket, half ``POST
  /api/game/{id}/analysis`` over HTTP: all refused;
* the honest player (a guest) plays the computer at level 1 in Mini-Shogi, random legal moves,
  a new game when one ends: the time from the ack of each of its moves to the computer's reply
  is the latency reported (p50 / p99 / max), with how many analysis positions the worker
  finished meanwhile (the attack's work really ran).

The probe's window covers the attack: its largest loop lag is the longest stall any player
felt. Prints a JSON report. Argon2 is set cheap (logins are another bench's subject). Never in
CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
from bench_computer import Socket, summary
from processes import (
    cpu_seconds,
    probe_report,
    stall_summary,
    start_hub,
    start_worker,
    stop_worker,
)
from websockets.asyncio.client import connect

from server.rules import Game, MoveRecord, get_variant
from server.rules.time_control import Fischer
from server.store import Store
from server.store.migrate import upgrade_to_head

TC = {"kind": "fischer", "base_s": 600, "inc_s": 5}


async def seed(url: str, variant: str, count: int, plies: int, seed_base: int) -> list[str]:
    """``count`` finished random games of ``variant`` (up to ``plies`` moves) in the store."""
    await upgrade_to_head(url)
    store = Store.from_url(url, pool_size=1)
    ids = []
    try:
        for n in range(count):
            v = get_variant(variant)
            game = Game(v)
            rng = random.Random(seed_base + n)
            while game.ply < plies and game.outcome() is None:
                game.play(rng.choice(game.legal_moves()))
            game_id = await store.create_game(
                variant=variant, start_fen=v.start_fen,
                time_control=Fischer(300_000, 0), first_name="a", second_name="b",
            )
            await store.start_game(game_id)
            records = zip(game.moves, game.displays, strict=True)
            await store.append_moves(
                [(game_id, MoveRecord(i, m, d, 1000, 10)) for i, (m, d) in enumerate(records, 1)]
            )
            await store.finish_game(game_id, "1-0", "resignation", plies=game.ply, final_fen=game.fen())
            ids.append(game_id)
    finally:
        await store.close()
    return ids


def code_of(answer: dict[str, Any]) -> str:
    return str(answer["d"]["code"]) if answer["t"] == "error" else "accepted"


async def attacker(url: str, name: str, games: list[str], deadline: float, codes: Counter[str]) -> None:
    async with connect(url) as ws:
        client = Socket(ws)
        await client.identify("register", {"name": name, "password": "correct horse battery"})
        rng = random.Random(name)
        movetime = 10_000
        while time.monotonic() < deadline:
            answer = await client.request("analyse", {"game": rng.choice(games), "movetime_ms": movetime})
            code = code_of(answer)
            codes[code] += 1
            if code == "analysis_too_long":  # the bound names the longest move time that fits
                movetime = int(answer["d"]["message"].rsplit("at most ", 1)[1].split()[0])
            elif code == "rate_limited":
                await asyncio.sleep(0.1)


async def anonymous(port: int, count: int, games: list[str], codes: Counter[str]) -> None:
    """``count`` requests without a login, half over new websockets, half over HTTP, 50 at a
    time (the websocket door admits so many handshakes at once)."""
    url = f"ws://127.0.0.1:{port}/ws"
    at_once = asyncio.Semaphore(50)

    async def one_ws(n: int) -> None:
        async with connect(url) as ws:
            codes[code_of(await Socket(ws).request("analyse", {"game": games[n % len(games)]}))] += 1

    async def one_http(http: aiohttp.ClientSession, n: int) -> None:
        path = f"http://127.0.0.1:{port}/api/game/{games[n % len(games)]}/analysis"
        async with http.post(path, json={"movetime_ms": 10_000}) as answer:
            codes[f"http {answer.status}"] += 1

    async def bounded(request: Any) -> None:
        async with at_once:
            try:
                await request
            except (OSError, TimeoutError, aiohttp.ClientError) as exc:
                codes[f"failed: {type(exc).__name__}"] += 1

    async with aiohttp.ClientSession() as http:
        half = count // 2
        await asyncio.gather(
            *(bounded(one_ws(n)) for n in range(half)),
            *(bounded(one_http(http, n)) for n in range(count - half)),
        )


async def honest(url: str, deadline: float, samples: list[float], games: list[int]) -> None:
    """A guest plays the computer at level 1 (Mini-Shogi) until ``deadline``."""
    rng = random.Random(7)
    async with connect(url) as ws:
        client = Socket(ws)
        await client.identify("guest")
        while time.monotonic() < deadline:
            answer = await client.request(
                "challenge_ai", {"variant": "minishogi", "level": 1, "tc": TC, "colour": "first"}
            )
            game_id = answer["d"]["game"]
            games[0] += 1
            side, moves, legal, turn, acked, my_ack = "", 0, [], None, None, None
            while True:
                m = await client.recv()
                t, d = m["t"], m.get("d") or {}
                if t == "ack" and m.get("a") == my_ack:
                    acked = time.perf_counter()
                    continue
                if d.get("game") != game_id:
                    continue
                if t == "game":
                    side, moves, legal, turn = d["role"], len(d["moves"]), d["legal"], d["turn"]
                elif t == "move":
                    moves, legal, turn = d["ply"], d["legal"], d["turn"]
                    if d["side"] != side and acked is not None:
                        samples.append(time.perf_counter() - acked)
                        acked = None
                elif t == "end":
                    break
                else:
                    continue
                if turn != side or not legal:
                    continue
                if moves >= 60 or time.monotonic() > deadline:
                    await client.send("resign", {"game": game_id})
                    continue
                my_ack = next(client.acks)
                await client.send(
                    "move", {"game": game_id, "ply": moves + 1, "move": rng.choice(sorted(legal))}, my_ack
                )


async def analysed(url: str, games: list[str]) -> dict[str, int]:
    """How far the attackers' analyses got: positions stored, analyses accepted and done."""
    store = Store.from_url(url, pool_size=1)
    try:
        found = [await store.get_analysis(game_id) for game_id in games]
    finally:
        await store.close()
    return {
        "analyses": sum(1 for a in found if a is not None),
        "done": sum(1 for a in found if a is not None and a.state == "done"),
        "positions": sum(a.plies_done for a in found if a is not None),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--attackers", type=int, default=20)
    parser.add_argument("--anonymous", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--dai-games", type=int, default=8)
    parser.add_argument("--plies", type=int, default=240)
    parser.add_argument("--slots", type=int, default=1)
    args = parser.parse_args()
    key = secrets.token_urlsafe(24)
    os.environ.update(
        HUB_WORKER_KEYS=key, HUB_ARGON2_TIME_COST="1", HUB_ARGON2_MEMORY_KIB="8",
        HUB_ARGON2_PARALLELISM="1", HUB_ANALYSIS_DAILY_QUOTA="20",
    )
    workdir = Path(tempfile.mkdtemp(prefix="bench-abuse-analysis-"))
    database = f"sqlite+aiosqlite:///{workdir / 'hub.sqlite3'}"
    seeded = time.monotonic()
    dai = await seed(database, "daishogi", args.dai_games, args.plies, 100)
    print(f"seeded {len(dai)} Dai Shogi games in {time.monotonic() - seeded:.0f} s", file=sys.stderr)
    hub = await start_hub(database, workdir)
    worker = start_worker(hub.port, key, workdir, "--slots", str(args.slots))
    url = f"ws://127.0.0.1:{hub.port}/ws"
    try:
        async with connect(url) as ws:  # the hub finished starting
            await Socket(ws).identify("guest")
        await probe_report(hub, signal.SIGUSR1, "window")
        load_before, cpu_before = os.getloadavg()[0], cpu_seconds(hub.popen.pid)
        started = time.monotonic()
        deadline = started + args.seconds
        attacks: Counter[str] = Counter()
        refused: Counter[str] = Counter()
        samples: list[float] = []
        honest_games = [0]
        await asyncio.gather(
            honest(url, deadline, samples, honest_games),
            *(attacker(url, f"mallory{n}", dai, deadline, attacks) for n in range(args.attackers)),
            anonymous(hub.port, args.anonymous, dai, refused),
        )
        window = await probe_report(hub, signal.SIGUSR1, "window")
        elapsed = time.monotonic() - started
        report = {
            "attackers": args.attackers,
            "anonymous_requests": args.anonymous,
            "seconds": args.seconds,
            "worker_slots": args.slots,
            "dai_games_plies": args.plies,
            "cpus": os.cpu_count(),
            "attackers_answers": dict(attacks),
            "anonymous_answers": dict(refused),
            "honest_level1_reply": summary(samples),
            # which replies were the slowest (0 = the first: the engine's cold start)
            "honest_slowest": sorted(
                ((round(1000 * v), i) for i, v in enumerate(samples)), reverse=True
            )[:5],
            "honest_games": honest_games[0],
            "attackers_work_done": await analysed(database, dai),
            "stall": stall_summary(window),
            "hub_cpu_share": round((cpu_seconds(hub.popen.pid) - cpu_before) / elapsed, 3),
            "loadavg_before_after": [load_before, os.getloadavg()[0]],
        }
        print(json.dumps(report, indent=1))
    finally:
        stop_worker(worker)
        hub.stop()


if __name__ == "__main__":
    asyncio.run(main())

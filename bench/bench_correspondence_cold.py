"""Cold correspondence games (docs/correspondence.md "Memory"): a hub's start-up time and memory
with 0, 10 000 and 100 000 running correspondence games in PostgreSQL, then the first move in
cold games (never loaded since the start) as a websocket client sees it, and the loop's stall.

A fresh PostgreSQL database (dropped at the end) gets ``--players`` registered players and the
games bulk-inserted (asyncpg ``COPY``): minishogi, 3 days per move, two moves played, the first
player to move, a stored deadline two days and 23 hours ahead. For each count the real hub
(``python -m server`` with the probe, ``bench/processes.py``) is started: the start-up time is
from the process's spawn until a client's ``hello`` (the port polled every 5 ms), the RSS read
then. At the largest count, ``--moves`` clients each connect, log in with a session token
(``resume``), and play the third move of a different cold game, one after the other: the time
from sending the move to its acknowledgement (the game read, replayed and the move stored), and
the whole (connect + login + move). The probe gives the loop's longest stall over the moves.

Usage: ``python bench/bench_correspondence_cold.py [--counts 0,10000,100000] [--moves 500]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import checkout  # noqa: F401  (this checkout's server first on sys.path)
from load_clients import percentile
from processes import Process, cpu_seconds, probe_report, rss_kib, start_hub
from support import create_database, drop_database, pg_dsn
from websockets.asyncio.client import connect

from server.rules import Game, get_variant
from server.rules.time_control import DAY_MS
from server.store import Store
from server.store.games import new_game_id
from server.store.migrate import upgrade_to_head

VARIANT = "minishogi"
DAYS = 3
OPENING = ("a1b2", "a5a2")
THIRD = "b2c3"
FOURTH = "d5c4"


async def make_players(store: Store, count: int) -> tuple[list[int], list[str], list[str]]:
    """``count`` registered players: ids, names and one session token each."""
    ids, names, tokens = [], [], []
    for n in range(count):
        player = await store.create_player(f"cold{n:05d}", "x" * 20)
        ids.append(player.id)
        names.append(player.name)
        tokens.append(await store.create_session(player.id))
    return ids, names, tokens


async def add_games(
    dsn: str, count: int, ids: list[int], names: list[str], offset: int
) -> list[tuple[str, int, int]]:
    """Bulk-insert ``count`` running correspondence games; their ids and players' indexes."""
    variant = get_variant(VARIANT)
    game = Game(variant)
    displays = [game.play(uci).display for uci in OPENING]
    now = datetime.now(UTC)
    started = now - timedelta(hours=2)
    moved = now - timedelta(hours=1)
    allowance = DAYS * DAY_MS
    deadline = int(moved.timestamp() * 1000) + allowance
    games, moves, made = [], [], []
    for n in range(offset, offset + count):
        first = n % len(ids)
        second = (first + 1 + n // len(ids)) % len(ids)
        if second == first:
            second = (first + 1) % len(ids)
        game_id = new_game_id()
        made.append((game_id, first, second))
        games.append(
            (game_id, VARIANT, variant.start_fen, "correspondence", ids[first], ids[second],
             names[first], names[second], "correspondence", allowance, 0, 0, 0, False,
             "started", started, started, deadline)
        )  # fmt: skip
        for ply, (uci, display) in enumerate(zip(OPENING, displays, strict=True), 1):
            moves.append((game_id, ply, uci, display, allowance, 1000, None, moved))
    connection = await asyncpg.connect(dsn)
    try:
        await connection.copy_records_to_table(
            "games",
            records=games,
            columns=[
                "id", "variant", "start_fen", "speed", "first_player_id", "second_player_id",
                "first_name", "second_name", "clock_kind", "base_ms", "increment_ms",
                "byoyomi_ms", "periods", "rated", "status", "created_at", "started_at",
                "deadline_ms",
            ],
        )  # fmt: skip
        await connection.copy_records_to_table(
            "game_moves",
            records=moves,
            columns=[
                "game_id", "ply", "uci", "display", "clock_ms", "spent_ms", "periods_left",
                "created_at",
            ],
        )  # fmt: skip
        await connection.execute("ANALYZE games; ANALYZE game_moves")
    finally:
        await connection.close()
    return made


async def hello(url: str, token: str) -> dict[str, object]:
    async with connect(url) as ws:
        await ws.send(json.dumps({"t": "resume", "d": {"token": token}, "a": 1}))
        while True:
            message = json.loads(await ws.recv())
            if message["t"] == "hello":
                return dict(message)
            if message["t"] == "error":
                raise RuntimeError(message)


async def start(
    database_url: str, workdir: Path, token: str
) -> tuple[Process, float, float, int]:
    """The hub, its start-up time (spawn to a client's hello), the CPU it used until then
    (seconds) and its RSS (KiB) then."""
    began = time.perf_counter()
    hub = await start_hub(database_url, workdir, poll_s=0.005)
    url = f"ws://127.0.0.1:{hub.port}/ws"
    await hello(url, token)
    elapsed = time.perf_counter() - began
    return hub, elapsed, cpu_seconds(hub.popen.pid), rss_kib(hub.popen.pid)


async def play(url: str, token: str, game_id: str, ply: int, uci: str) -> tuple[float, float]:
    """Connect, log in, play move ``ply`` of a game: (move to ack, whole) in seconds."""
    began = time.perf_counter()
    async with connect(url) as ws:
        await ws.send(json.dumps({"t": "resume", "d": {"token": token}, "a": 1}))
        while json.loads(await ws.recv())["t"] != "hello":
            pass
        sent = time.perf_counter()
        move = {"game": game_id, "ply": ply, "move": uci}
        await ws.send(json.dumps({"t": "move", "d": move, "a": 2}))
        while True:
            message = json.loads(await ws.recv())
            if message.get("a") == 2:
                if message["t"] != "ack":
                    raise RuntimeError(message)
                done = time.perf_counter()
                return done - sent, done - began


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="0,10000,100000", help="games, comma-separated")
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--moves", type=int, default=500)
    args = parser.parse_args()
    counts = sorted(int(c) for c in args.counts.split(","))
    database_url = await create_database("cold_bench")
    dsn = pg_dsn(database_url)
    try:
        await upgrade_to_head(database_url)
        store = Store.from_url(database_url)
        began = time.perf_counter()
        ids, names, tokens = await make_players(store, args.players)
        await store.close()
        print(f"{args.players} players and sessions in {time.perf_counter() - began:.1f} s")
        games: list[tuple[str, int, int]] = []
        hub: Process | None = None
        with tempfile.TemporaryDirectory() as tmp:
            for count in counts:
                began = time.perf_counter()
                games += await add_games(dsn, count - len(games), ids, names, len(games))
                inserted = time.perf_counter() - began
                workdir = Path(tmp) / str(count)
                workdir.mkdir()
                hub, startup, cpu, rss = await start(database_url, workdir, tokens[0])
                print(
                    f"{count:>7} games (inserted in {inserted:.1f} s): start-up {startup:.2f} s"
                    f" ({cpu:.2f} s of CPU), RSS {rss / 1024:.1f} MiB"
                )
                if count != counts[-1]:
                    hub.stop()
            assert hub is not None
            url = f"ws://127.0.0.1:{hub.port}/ws"
            chosen = games[: args.moves]
            await probe_report(hub, signal.SIGUSR1, "window")  # the window starts now
            cpu_before = cpu_seconds(hub.popen.pid)
            acks, wholes, hot_acks, hot_wholes = [], [], [], []
            for game_id, first, _ in chosen:
                ack, whole = await play(url, tokens[first], game_id, 3, THIRD)
                acks.append(ack * 1000)
                wholes.append(whole * 1000)
            cpu_cold = (cpu_seconds(hub.popen.pid) - cpu_before) / len(chosen)
            cpu_before = cpu_seconds(hub.popen.pid)
            # The same, in the same games now in memory: the opponent's answer (the baseline).
            for game_id, _, second in chosen:
                ack, whole = await play(url, tokens[second], game_id, 4, FOURTH)
                hot_acks.append(ack * 1000)
                hot_wholes.append(whole * 1000)
            cpu_hot = (cpu_seconds(hub.popen.pid) - cpu_before) / len(chosen)
            window = await probe_report(hub, signal.SIGUSR1, "window")
            rss_after = rss_kib(hub.popen.pid)
            hub.stop()
        for label, values in (
            ("cold, move to ack", acks),
            ("cold, connect + login + move", wholes),
            ("in memory, move to ack", hot_acks),
            ("in memory, connect + login + move", hot_wholes),
        ):
            print(
                f"{label}: p50 {percentile(values, 0.5):.1f} ms,"
                f" p99 {percentile(values, 0.99):.1f} ms, max {max(values):.1f} ms"
                f" ({len(values)} games)"
            )
        print(
            f"loop stall over the moves: max {window['lag_max_ms']:.1f} ms,"
            f" p99 {window['lag_p99_ms']:.1f} ms; hub CPU per connection + login + move:"
            f" cold {cpu_cold * 1000:.2f} ms, in memory {cpu_hot * 1000:.2f} ms; RSS after"
            f" {len(chosen)} loads"
            f" {rss_after / 1024:.1f} MiB"
        )
    finally:
        await drop_database(database_url)


if __name__ == "__main__":
    os.environ.setdefault("HUB_LOG_LEVEL", "WARNING")
    socket.setdefaulttimeout(30)
    asyncio.run(main())

"""Chaos run: many concurrent games on a cluster while its parts are killed and restarted.

Run by hand (never in CI)::

    .venv/bin/python bench/chaos.py                          # 200 games, 180 s
    .venv/bin/python bench/chaos.py --games 300 --seconds 300 --fault-every 6

What runs: a private PostgreSQL (``scripts/cluster.py``'s ``PostgresServer``, its own data
directory and port), a private ``redis-server`` and ``--hubs`` hub processes behind the TCP
proxy (``LocalCluster``). ``--games`` pairs of registered players play Mini-Shogi through the
proxy: random legal moves after a random think time, a new game after each end. Every
``--fault-every`` seconds one fault, in turn:

* ``kill_hub``: SIGKILL a random hub, started again a few seconds later (its games are taken
  over; its players reconnect through the proxy);
* ``restart_postgres``: the database stopped (fast shutdown) for a moment, then started;
* ``restart_redis``: Redis stopped for a moment, then started (the hubs run degraded meanwhile);
* ``drop_clients``: a random tenth of the client sockets closed.

Clients treat failures as a player would: a refused move (``move_not_saved``, ``busy``,
``node_unavailable`` …) is sent again, a closed socket is reopened with the session token and
the game joined again with the last version seen.

When the time is up the faults stop, every client reconnects and joins its game with its last
version, and the invariants are checked:

1. every acknowledged move is in the database (same game, ply and move);
2. every client's move list, rebuilt only from the messages it received, equals the stored game;
3. every game either ended (stored as finished or aborted) or is still running on a hub with sane
   clocks (between zero and its time budget);
4. no ``internal_error`` reached a client, no socket was closed with 1011, and no hub logged a
   failed connection handler or command.

Prints the counts (games, acknowledged moves, faults of each kind, reconnections, violations)
as a Markdown table for docs/benchmarks.md. Exits 1 if there is any violation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts"), str(ROOT / "tests")]

from cluster import LocalCluster, PostgresServer  # noqa: E402
from room_view import RoomView  # noqa: E402  (tests/room_view.py)
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidHandshake  # noqa: E402

from server.rules import Game, get_variant  # noqa: E402
from server.store import Store  # noqa: E402

BASE_S, INC_S = 600, 2
TC = {"kind": "fischer", "base_s": BASE_S, "inc_s": INC_S}
PASSWORD = "correct horse"
RETRY = frozenset(
    {"busy", "node_unavailable", "cluster_unavailable", "move_not_saved", "game_not_created"}
)
HUB_ENV = {
    "HUB_LOG_LEVEL": "INFO",
    "HUB_LEASE_TTL_MS": "3000",
    "HUB_PRESENCE_TTL_MS": "3000",
    "HUB_BUS_PING_INTERVAL_S": "0.5",
    "HUB_BUS_BACKOFF_MAX_S": "0.5",
    "HUB_RECONNECT_GRACE_S": "600",
    "HUB_RATE_LIMIT_PER_S": "1000",
    "HUB_RATE_LIMIT_BURST": "1000",
    "HUB_SEND_QUEUE_LIMIT": "4096",
    "HUB_ARGON2_TIME_COST": "1",
    "HUB_ARGON2_MEMORY_KIB": "8",
    "HUB_ARGON2_PARALLELISM": "1",
    "HUB_REGISTRATIONS_PER_ADDRESS_PER_HOUR": "100000",
}
LOG_VIOLATIONS = ("connection handler failed", "hub failed on", "internal_error")


@dataclass
class Tally:
    acked: set[tuple[str, int, str]] = field(default_factory=set)
    games: set[str] = field(default_factory=set)
    errors: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    reconnects: int = 0
    closes_1011: int = 0


class Player:
    """One registered player's connection, reopened with its session token when it breaks."""

    _acks = 0

    def __init__(self, name: str, tally: Tally) -> None:
        self.name = name
        self.tally = tally
        self.ws: ClientConnection | None = None
        self.token: str | None = None
        self.running_game: str | None = None
        """The running game the last ``hello`` named."""
        self.seen: list[dict[str, Any]] = []
        self.backlog: list[dict[str, Any]] = []

    async def connect(self, url: str, game_id: str | None = None) -> None:
        """(Re)open the socket, log in (register the first time), join ``game_id`` with the
        last version seen. Retries until it works."""
        while True:
            try:
                await self._connect(url, game_id)
                return
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError, RuntimeError):
                await asyncio.sleep(0.5)

    async def _connect(self, url: str, game_id: str | None) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.tally.reconnects += 1
        self.backlog = []
        self.ws = await connect(url, open_timeout=10, max_size=2**22)
        kind, data = (
            ("resume", {"token": self.token})
            if self.token
            else ("register", {"name": self.name, "password": PASSWORD})
        )
        answer = await self.request(kind, data)
        if answer["t"] == "error" and answer["d"]["code"] == "name_taken":
            # Registered by an earlier attempt whose answer was lost: log in instead.
            answer = await self.request("login", {"name": self.name, "password": PASSWORD})
        if answer["t"] != "welcome":
            raise RuntimeError(f"{self.name}: {kind} refused: {answer}")
        self.token = answer["d"]["token"]
        hello = await self.next(lambda m: m["t"] == "hello", 15)
        self.running_game = hello["d"]["game"]
        if game_id is not None:
            version = RoomView(game_id).apply_all(self.seen).version
            join: dict[str, Any] = {"game": game_id}
            if version is not None:
                join["v"] = version
            attempts = 0
            while True:
                answer = await self.request("join", join)
                if answer["t"] == "ack":
                    return
                code = answer["d"]["code"]
                attempts += 1
                if code == "no_such_game" and attempts > 100:
                    return  # never created (its row could not be written): nothing to follow
                if code not in RETRY and code != "no_such_game":
                    raise RuntimeError(f"{self.name}: join refused: {answer}")
                await asyncio.sleep(0.3)

    async def request(self, t: str, d: dict[str, Any], timeout: float = 15) -> dict[str, Any]:
        Player._acks += 1
        ack = Player._acks
        assert self.ws is not None
        await self.ws.send(json.dumps({"t": t, "d": d, "a": ack}))
        return await self.next(lambda m: m.get("a") == ack, timeout)

    async def next(self, match: Any, timeout: float) -> dict[str, Any]:
        for index, waiting in enumerate(self.backlog):
            if match(waiting):
                return self.backlog.pop(index)
        deadline = time.monotonic() + timeout
        assert self.ws is not None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(self.name)
            try:
                raw = await asyncio.wait_for(self.ws.recv(), left)
            except ConnectionClosed as closed:
                if closed.rcvd is not None and closed.rcvd.code == 1011:
                    self.tally.closes_1011 += 1
                raise
            message: dict[str, Any] = json.loads(raw)
            self.seen.append(message)
            if message["t"] == "error":
                self.tally.errors[message["d"]["code"]] += 1
            if match(message):
                return message
            self.backlog.append(message)
            del self.backlog[:-200]  # nobody waits for old ones

    async def drop(self) -> None:
        if self.ws is not None:
            await self.ws.close()


class Table:
    """Two players playing one game after another until ``until``."""

    def __init__(self, index: int, url: str, tally: Tally, rng: random.Random) -> None:
        self.url = url
        self.tally = tally
        self.rng = rng
        self.players = (Player(f"chaos{index}a", tally), Player(f"chaos{index}b", tally))
        self.game_id: str | None = None
        self.think_s = 1.0

    async def run(self, until: float) -> None:
        for player in self.players:
            await player.connect(self.url)
        while time.monotonic() < until:
            try:
                if self.game_id is None or self.ended():
                    await self.start_game(until)
                await self.play(until)
            except (ConnectionClosed, TimeoutError, OSError):
                await self.reconnect_all()

    async def reconnect_all(self) -> None:
        for player in self.players:
            await player.connect(self.url, self.game_id)

    async def start_game(self, until: float) -> None:
        first, second = self.players
        while time.monotonic() < until:
            posted = await first.request(
                "seek", {"variant": "minishogi", "tc": TC, "colour": "first"}
            )
            if posted["t"] == "ack" and "seek" in posted["d"]:
                break
            if posted["t"] == "error" and posted["d"]["code"] == "already_playing":
                # A game this table started but never saw begin (a fault in between).
                await first.connect(self.url)
                self.game_id = first.running_game
                if self.game_id is not None:
                    self.tally.games.add(self.game_id)
                    await self.reconnect_all()
                    return
            await asyncio.sleep(0.5)
        else:
            return
        seek_id = posted["d"]["seek"]
        for _ in range(100):
            answer = await second.request("play", {"id": seek_id})
            if answer["t"] == "ack":
                started = await first.next(
                    lambda m: m["t"] == "game_start"
                    or (m["t"] == "error" and m["d"]["code"] == "game_not_created"),
                    15,
                )
                if started["t"] == "game_start":  # stored: it exists for everyone
                    self.game_id = answer["d"]["game"]
                    self.tally.games.add(self.game_id)
                return
            await asyncio.sleep(0.2)  # the registry is updated just after the seeker's ack
        await first.request("unseek", {})

    def view(self, player: Player) -> RoomView:
        assert self.game_id is not None
        return RoomView(self.game_id).apply_all(player.seen)

    def ended(self) -> bool:
        return any(
            m["t"] == "end" and m["d"].get("game") == self.game_id
            for player in self.players
            for m in player.seen[-50:]
        )

    async def play(self, until: float) -> None:
        game_id = self.game_id
        assert game_id is not None
        variant = get_variant("minishogi")
        while not self.ended():
            moves = self.view(self.players[0]).moves
            game = Game(variant)
            for uci in moves:
                game.play(uci)
            if game.outcome() is not None:
                await self.await_end()
                continue
            mover = self.players[int(game.side_to_move)]
            if time.monotonic() >= until:
                return  # left running: checked to resume with sane clocks
            await asyncio.sleep(self.rng.uniform(0, 2 * self.think_s))
            ply, uci = len(moves) + 1, self.rng.choice(game.legal_moves())
            answer = await mover.request("move", {"game": game_id, "ply": ply, "move": uci})
            if answer["t"] == "ack":
                self.tally.acked.add((game_id, ply, uci))
            elif answer["d"]["code"] in RETRY:
                await asyncio.sleep(0.3)
                continue
            elif answer["d"]["code"] == "game_over":
                await self.await_end()
                return
            # Wait until the first player saw the move (or learns otherwise).
            await self.players[0].next(self._saw(game_id, ply), 15)

    async def await_end(self) -> None:
        if not self.ended():
            await self.players[0].next(lambda m: m["t"] == "end", 15)

    @staticmethod
    def _saw(game_id: str, ply: int) -> Any:
        def test(message: dict[str, Any]) -> bool:
            if message.get("d", {}).get("game") != game_id:
                return False
            kind = message["t"]
            return kind in ("end", "game") or (kind == "move" and message["d"]["ply"] >= ply)

        return test


async def inject_faults(
    cluster: LocalCluster,
    postgres: PostgresServer,
    tables: list[Table],
    until: float,
    every: float,
    tally: Tally,
    rng: random.Random,
) -> None:
    kinds = ["kill_hub", "drop_clients", "restart_postgres", "drop_clients", "restart_redis"]
    turn = 0
    while time.monotonic() + every < until:
        await asyncio.sleep(every)
        kind = kinds[turn % len(kinds)]
        turn += 1
        tally.faults[kind] += 1
        print(f"{time.strftime('%H:%M:%S')} fault: {kind}", flush=True)
        if kind == "kill_hub":
            hub = rng.choice(cluster.hubs)
            await hub.kill()
            await asyncio.sleep(3)
            await hub.start()
        elif kind == "restart_postgres":
            await postgres.stop()
            await asyncio.sleep(1)
            await postgres.start()
        elif kind == "restart_redis":
            assert cluster.redis is not None
            await cluster.redis.stop()
            await asyncio.sleep(1)
            await cluster.redis.start()
        else:
            players = [p for table in tables for p in table.players]
            for player in rng.sample(players, max(1, len(players) // 10)):
                await player.drop()


async def check(cluster: LocalCluster, tables: list[Table], tally: Tally) -> Counter[str]:
    """Reconnect everyone, then compare what each client knows with the database."""
    violations: Counter[str] = Counter()
    await asyncio.gather(
        *(
            player.connect(cluster.url, table.game_id)
            for table in tables
            if table.game_id is not None
            for player in table.players
        )
    )
    async with Store.from_url(cluster.database_url, pool_size=2) as store:
        stored = {game_id: await store.get_game(game_id) for game_id in tally.games}
    moves = {
        game_id: [m.uci for m in game.moves] for game_id, game in stored.items() if game is not None
    }
    for game_id, ply, uci in tally.acked:
        if len(moves.get(game_id, [])) < ply or moves[game_id][ply - 1] != uci:
            violations["acknowledged move missing"] += 1
    for table in tables:
        if table.game_id is None:
            continue
        game_id = table.game_id
        game = stored.get(game_id)
        if game is None:
            violations["game missing"] += 1
            continue
        for player in table.players:
            view = RoomView(game_id).apply_all(player.seen)
            if view.moves != moves[game_id]:
                violations["client view differs from the stored game"] += 1
            if view.breaks:
                violations["version sequence broken"] += 1
                if violations["version sequence broken"] <= 5:
                    print(f"{player.name} {game_id}: {view.breaks[:3]}", flush=True)
            answer = await player.request("join", {"game": game_id})
            if answer["t"] != "ack":
                if game.status == "started":
                    violations["running game cannot be joined"] += 1
                continue
            state = await player.next(lambda m: m["t"] == "game", 15)
            if game.status == "started":
                clocks = state["d"]["clocks"]
                budget = (BASE_S + INC_S * len(moves[game_id])) * 1000
                for side in ("first", "second"):
                    if not 0 <= clocks[side]["ms"] <= budget:
                        violations["insane clock"] += 1
                if state["d"]["status"] != "started":
                    violations["running game shown as over"] += 1
    if tally.closes_1011:
        violations["socket closed with 1011"] += tally.closes_1011
    if tally.errors["internal_error"]:
        violations["internal_error sent"] += tally.errors["internal_error"]
    for hub in cluster.hubs:
        text = hub.child.log_path.read_text(errors="replace")
        for needle in LOG_VIOLATIONS:
            violations[f"hub log: {needle}"] += text.count(needle)
    return +violations


async def main_async(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    tally = Tally()
    log_dir = Path(args.log_dir or tempfile.mkdtemp(prefix="hub-chaos-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"logs in {log_dir}", flush=True)
    postgres = PostgresServer(log_dir)
    await postgres.start()
    database_url = await postgres.create_database("chaos")
    cluster = LocalCluster(
        hubs=args.hubs, database_url=database_url, redis_url=None, env=HUB_ENV, log_dir=log_dir
    )
    try:
        await cluster.start()
        tables = [
            Table(i, cluster.url, tally, random.Random(rng.random())) for i in range(args.games)
        ]
        started = time.monotonic()
        until = started + args.seconds
        runs = [asyncio.create_task(table.run(until)) for table in tables]
        await inject_faults(cluster, postgres, tables, until, args.fault_every, tally, rng)
        done, pending = await asyncio.wait(runs, timeout=max(0, until - time.monotonic()) + 60)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        crashed = [task.exception() for task in done if task.exception() is not None]
        violations = await check(cluster, tables, tally)
        if crashed:
            violations["client task failed"] += len(crashed)
            print("first client failure:", repr(crashed[0]))
        report(args, tally, violations, time.monotonic() - started)
        return 1 if violations else 0
    finally:
        await cluster.stop()
        await postgres.remove()


def report(args: argparse.Namespace, tally: Tally, violations: Counter[str], wall: float) -> None:
    print(f"\n### Chaos run: {args.games} games on {args.hubs} hubs, {args.seconds:.0f} s\n")
    print("| count | value |\n|---|---|")
    print(f"| games played | {len(tally.games)} |")
    print(f"| moves acknowledged | {len(tally.acked)} |")
    for kind, count in sorted(tally.faults.items()):
        print(f"| faults: {kind} | {count} |")
    print(f"| client reconnections | {tally.reconnects} |")
    for code, count in sorted(tally.errors.items()):
        print(f"| refusals: {code} | {count} |")
    print(f"| violations | {sum(violations.values())} |")
    for kind, count in sorted(violations.items()):
        print(f"| violation: {kind} | {count} |")
    print(f"| wall time | {wall:.0f} s |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--hubs", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--fault-every", type=float, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-dir", default="")
    args = parser.parse_args()
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()

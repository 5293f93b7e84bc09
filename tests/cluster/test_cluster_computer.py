"""The computer across hubs: two real hub processes, one real engine worker (through HAProxy,
so its ``/fishnet`` calls reach either hub), the job queue and the games' owners shared through
PostgreSQL and Redis. A player on hub2 plays the computer; hub2, which owns the game, is
SIGKILLed mid-game while the computer's move job waits in the database; hub1 takes the game
over, its own computer seat picks it up, and the computer keeps playing to the end
(docs/engines.md, "Several hubs"). Then the worker itself is SIGKILLed mid-search on a job of
hub2's game, and a second worker, talking to hub1 only, finishes that job."""

from __future__ import annotations

import json
import random
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import pytest
import pytest_asyncio
from cluster_support import HUB_ENV, Client, LocalCluster, finished_game
from processes import Child
from support import create_database, drop_database, pg_dsn

pytestmark = pytest.mark.asyncio(loop_scope="module")

HUB_ARGV = [sys.executable, "-m", "server"]
TURN_TIMEOUT_S = 60.0
"""Longest wait for one computer move (a takeover and a job lease running out included)."""
KILLED_AT = 6
"""The human's plies played before the owner is killed."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster() -> AsyncIterator[LocalCluster]:
    url = await create_database("cluster_test")
    env = {**HUB_ENV, "HUB_MOVE_LEASE_S": "6", "HUB_FISHNET_POLL_S": "1"}
    local = LocalCluster(
        hubs=2, workers=1, database_url=url, redis_url=None, env=env, hub_argv=HUB_ARGV
    )
    try:
        await local.start()
        yield local
    finally:
        await local.stop()
        await drop_database(url)


@dataclass
class Board:
    """The human's view of the game, from the room's messages (snapshots and moves)."""

    game_id: str
    side: str = ""
    moves: list[str] = field(default_factory=list)
    legal: list[str] = field(default_factory=list)
    turn: str | None = None
    end: dict[str, Any] | None = None
    computer_moves: int = 0
    v: int = -1
    """The room version seen last: a snapshot older than the events read is not the game now
    (after a takeover the resume and the join each bring one)."""

    def read(self, message: dict[str, Any]) -> None:
        data = message.get("d") or {}
        if data.get("game") != self.game_id:
            return
        v = message.get("v")
        if isinstance(v, int):
            if v < self.v:
                return
            self.v = v
        if message["t"] == "game":
            self.side = data["role"]
            self.moves, self.legal, self.turn = (
                list(data["moves"]),
                list(data["legal"]),
                data["turn"],
            )
            if data["status"] != "started":
                self.end = self.end or {"status": data["status"]}
        elif message["t"] == "move" and data["ply"] == len(self.moves) + 1:
            self.moves.append(data["uci"])
            if data["side"] != self.side:
                assert data["uci"] in self.legal, message
                self.computer_moves += 1
            self.legal, self.turn = list(data["legal"]), data["turn"]
        elif message["t"] == "end":
            self.end = data


async def next_event(client: Client, board: Board) -> None:
    message = await client.next(lambda m: m["t"] in ("game", "move", "end"), TURN_TIMEOUT_S)
    board.read(message)


async def play_until(
    client: Client, board: Board, rng: random.Random, human_plies: int | None
) -> None:
    """Answer every computer move with a random legal move until the human has played
    ``human_plies`` moves (None: until the game ends, resigning at 30 plies)."""
    while board.end is None:
        ours = board.turn == board.side and board.legal
        mine = sum(
            1 for ply in range(len(board.moves)) if (ply % 2 == 0) == (board.side == "first")
        )
        if ours and human_plies is not None and mine >= human_plies:
            return
        if ours and human_plies is None and len(board.moves) >= 30:
            await client.ok("resign", {"game": board.game_id})
        elif ours:
            ply = len(board.moves) + 1
            move = rng.choice(sorted(board.legal))
            answer = await client.retry("move", {"game": board.game_id, "ply": ply, "move": move})
            assert answer["t"] == "ack", answer
        await next_event(client, board)


async def move_jobs(
    cluster: LocalCluster, game_id: str, moves: list[str] | None = None
) -> list[dict[str, Any]]:
    """The game's move jobs in the database (those asked for ``moves`` only, if given)."""
    connection = await asyncpg.connect(pg_dsn(cluster.database_url))
    try:
        rows = await connection.fetch(
            "SELECT state, payload, result FROM engine_jobs WHERE game_id = $1 AND kind = 'move'",
            game_id,
        )
    finally:
        await connection.close()
    jobs = [dict(row) for row in rows]
    if moves is None:
        return jobs
    wanted = " ".join(moves)
    return [job for job in jobs if json.loads(job["payload"])["moves"] == wanted]


async def test_the_computer_keeps_playing_when_its_games_hub_is_killed(
    cluster: LocalCluster,
) -> None:
    _, hub2 = cluster.hubs
    human = await Client.register(hub2.url, "vs_computer")
    # The human's random moves can be mated before KILLED_AT (level 1 is not deterministic):
    # then a new game.
    for attempt in range(3):
        answer = await human.ok(
            "challenge_ai",
            {
                "variant": "minishogi",
                "level": 1,
                "colour": "first",
                "tc": {"kind": "fischer", "base_s": 600, "inc_s": 0},
            },
        )
        game_id = answer["game"]  # created by hub2, where the command ran: hub2 owns it
        start = await human.next(
            lambda m, game_id=game_id: m["t"] == "game_start" and m["d"]["game"] == game_id
        )
        assert start["d"]["opponent"]["computer"] is True
        board = Board(game_id)
        rng = random.Random(11 + attempt)
        while board.turn is None:
            await next_event(human, board)
        await play_until(human, board, rng, KILLED_AT)
        if board.end is None:
            break
    assert board.end is None and board.computer_moves == KILLED_AT
    # No worker for a while: the computer's next move job waits in the database when its
    # hub dies.
    (worker,) = cluster.workers
    await worker.stop()
    ply = len(board.moves) + 1
    await human.ok("move", {"game": game_id, "ply": ply, "move": rng.choice(sorted(board.legal))})
    while len(board.moves) < ply:
        await next_event(human, board)
    played = list(board.moves)
    while not await move_jobs(cluster, game_id, played):  # each look is a query: no sleeping
        pass

    await hub2.kill()
    try:
        assert await human.closed()
        await human.reconnect(cluster.url)  # to hub1, the one left
        rejoined = await human.retry("join", {"game": game_id}, within=60.0)
        assert rejoined["t"] == "ack", rejoined
        await next_event(human, board)  # the snapshot, from hub1
        assert board.moves == played and board.end is None and board.turn != board.side
        worker.start()
        # hub1's seat asked again; the worker answers; the game goes on to its end
        while len(board.moves) == ply:
            await next_event(human, board)
        assert board.computer_moves == KILLED_AT + 1
        await play_until(human, board, rng, None)
        assert board.end is not None and board.computer_moves > KILLED_AT + 1
        row, stored = await finished_game(cluster.database_url, game_id)
        assert row["status"] == "finished" and stored == board.moves
        assert "Computer" in (row["first_name"], row["second_name"])
        # One seat asked for each computer move, the owner's (hub2's, then hub1's), never
        # both; the job hub2 queued before it died was ended by hub1's, unanswered.
        jobs = await move_jobs(cluster, game_id)
        answered = [job for job in jobs if job["result"] not in (None, "null")]
        assert len(answered) == board.computer_moves, jobs
        assert len(jobs) == board.computer_moves + 1, jobs
    finally:
        await hub2.start()
    await human.close()


async def test_a_worker_killed_mid_search_leaves_the_clusters_job_to_another(
    cluster: LocalCluster,
) -> None:
    """The only worker (through HAProxy) is SIGKILLed while it searches the computer's move in
    a game hub2 owns; the job's lease runs out in the shared queue and a second worker, whose
    ``/fishnet`` calls go to hub1 only, acquires it, answers it through hub1, and hub2's game
    gets the move; the game goes on to its end."""
    hub1, hub2 = cluster.hubs
    (worker,) = cluster.workers
    if not worker.running:
        worker.start()
    human = await Client.register(hub2.url, "vs_killed_worker")
    # level 8 thinks on the clock: ~remaining/30 = 4 s a move here, long enough to be caught
    answer = await human.ok(
        "challenge_ai",
        {
            "variant": "minishogi",
            "level": 8,
            "colour": "first",
            "tc": {"kind": "fischer", "base_s": 120, "inc_s": 0},
        },
    )
    board = Board(answer["game"])
    while board.turn is None:
        await next_event(human, board)
    await human.ok("move", {"game": board.game_id, "ply": 1, "move": sorted(board.legal)[0]})
    await next_event(human, board)  # our move's room event
    connection = await asyncpg.connect(pg_dsn(cluster.database_url))
    rescuer = Child(
        "rescuer",
        [
            *worker.argv[: worker.argv.index("--name")],
            *("--name", "rescuer", "--url", f"http://127.0.0.1:{hub1.port}"),
        ],  # the key is in worker.env (HUB_WORKER_KEY)
        worker.env,
        cluster.log_dir,
    )
    query = (
        "SELECT id, state, worker, attempts FROM engine_jobs"
        " WHERE game_id = $1 AND kind = 'move' ORDER BY created_at"
    )
    try:
        held: list[Any] = []
        while not held:  # each look is a query: no sleeping
            rows = await connection.fetch(query, board.game_id)
            held = [r for r in rows if r["state"] == "acquired" and r["worker"] == "worker1"]
        await worker.signal(signal.SIGKILL)  # mid-search: no abort, no goodbye
        rescuer.start()
        await next_event(human, board)  # the computer's move, by the rescuer after the lease
        assert board.computer_moves == 1 and len(board.moves) == 2
        job = next(
            r for r in await connection.fetch(query, board.game_id) if r["id"] == held[0]["id"]
        )
        assert job["state"] == "done" and job["worker"] == "rescuer" and job["attempts"] >= 2
        await human.ok("resign", {"game": board.game_id})
        while board.end is None:
            await next_event(human, board)
        row, stored = await finished_game(cluster.database_url, board.game_id)
        assert row["status"] == "finished" and stored == board.moves
    finally:
        await connection.close()
        await rescuer.stop()
        if not worker.running:
            worker.start()
    await human.close()

"""Nothing acknowledged is lost when the server process is killed (SIGKILL) mid-game.

A real ``python -m server`` subprocess on SQLite and on PostgreSQL: two players play moves
(each acknowledged only after its commit), the process is killed without any chance to flush,
a new process starts on the same database, and the players resume their sessions, find the
game with every acknowledged move, and finish it.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from ws_support import Client, Game, create_pg_database, drop_pg_database, start_game

from server.store.migrate import upgrade_to_head

ROOT = Path(__file__).resolve().parents[2]
MATE_IN_4 = ["a1b2", "a5a2", "b2c3", "d5c4"]  # Mini-Shogi: the second player mates


async def start_server(database_url: str, cwd: Path) -> tuple[asyncio.subprocess.Process, int]:
    env = {
        **os.environ,
        "HUB_PORT": "0",
        "HUB_ICS_PORT": "0",
        "HUB_DATABASE_URL": database_url,
        "HUB_ARGON2_TIME_COST": "1",
        "HUB_ARGON2_MEMORY_KIB": "8",
        "HUB_ARGON2_PARALLELISM": "1",
        "PYTHONPATH": str(ROOT),
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


@pytest.fixture(params=["sqlite", "postgresql"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'crash.sqlite3'}"
        return
    url = await create_pg_database()
    await upgrade_to_head(url)  # the README's one command for PostgreSQL
    try:
        yield url
    finally:
        await drop_pg_database(url)


async def test_acknowledged_moves_survive_sigkill_and_the_game_is_finished_after_restart(
    database_url: str, tmp_path: Path
) -> None:
    process, port = await start_server(database_url, tmp_path)
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        alice, bob = await Client.open(url, "alice"), await Client.open(url, "bob")
        await alice.register("Alice")
        await bob.register("Bob")
        game = await start_game(alice, bob)
        for uci in MATE_IN_4[:3]:
            await game.play(uci)  # returns only after the ack, i.e. after the commit
        tokens = {"first": game.first.token, "second": game.second.token}
        process.send_signal(signal.SIGKILL)
        assert await asyncio.wait_for(process.wait(), 10) == -signal.SIGKILL
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    process, port = await start_server(database_url, tmp_path)
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        clients: dict[str, Client] = {}
        for side, token in tokens.items():
            client = await Client.open(url, side)
            assert token is not None
            await client.resume(token)
            assert client.hello is not None and client.hello["d"]["game"] == game.id
            await client.ok("join", {"game": game.id})
            snapshot = await client.next("game")
            assert snapshot["d"]["moves"] == MATE_IN_4[:3]
            assert snapshot["d"]["status"] == "started" and snapshot["d"]["turn"] == "second"
            clients[side] = client
        resumed = Game(game.id, clients["first"], clients["second"], snapshot)
        await resumed.play(MATE_IN_4[3])
        end = await resumed.end()
        assert end["d"]["termination"] == "checkmate"
        assert end["d"]["winner"] == "second"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 20)
        except TimeoutError:
            process.kill()
            await process.wait()

"""Nothing acknowledged is lost when the server process is killed (SIGKILL) mid-game.

A real ``python -m server`` subprocess on SQLite and on PostgreSQL: two players play moves
(each acknowledged only after its commit), the process is killed without any chance to flush,
a new process starts on the same database, and the players resume their sessions, find the
game with every acknowledged move, and finish it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support import create_database, drop_database
from ws_support import (
    Client,
    Game,
    kill_server,
    start_game,
    start_server,
    stop_server,
)

from server.store.migrate import upgrade_to_head

MATE_IN_4 = ["a1b2", "a5a2", "b2c3", "d5c4"]  # Mini-Shogi: the second player mates


@pytest.fixture(params=["sqlite", "postgresql"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'crash.sqlite3'}"
        return
    url = await create_database("transport_test")
    await upgrade_to_head(url)  # the README's one command for PostgreSQL
    try:
        yield url
    finally:
        await drop_database(url)


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
        await kill_server(process)
    finally:
        await stop_server(process)

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
        await stop_server(process)

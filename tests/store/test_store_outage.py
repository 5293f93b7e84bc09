"""Database outages: narrow errors instead of hangs or silent drops, and recovery."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy import text
from support import TcpForwarder, poll

from server.rules import MoveRecord
from server.rules.time_control import Fischer
from server.store import (
    GameMove,
    MoveWriter,
    Store,
    StoreUnavailableError,
)
from server.store.migrate import upgrade_to_head

NOWHERE = "postgresql+asyncpg://postgres@127.0.0.1:1/test"  # nothing listens on port 1
SCRIPTS = str(Path(__file__).resolve().parents[2] / "scripts")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)

from cluster import PostgresServer  # noqa: E402  (scripts/cluster.py)


@pytest.fixture
async def proxy(pg_url: str) -> AsyncIterator[TcpForwarder]:
    forwarder = TcpForwarder.to(pg_url)
    await forwarder.start()
    yield forwarder
    await forwarder.cut()


def move(game_id: str, ply: int) -> GameMove:
    return game_id, MoveRecord(ply, "a1a2", "a2", 1_000, 10)


async def new_game(store: Store) -> str:
    return await store.create_game(
        variant="spartan",
        start_fen="x",
        time_control=Fischer(60_000),
        first_name="a",
        second_name="b",
    )


async def test_unreachable_postgresql() -> None:
    async with Store.from_url(NOWHERE) as store:
        with pytest.raises(StoreUnavailableError):
            await store.ping()
        with pytest.raises(StoreUnavailableError):
            await store.create_player("alice", "hash")
        with pytest.raises(StoreUnavailableError):
            await store.get_game("abcd1234")
        with pytest.raises(StoreUnavailableError):
            await store.append_move(*move("abcd1234", 1))
        with pytest.raises(StoreUnavailableError):
            await store.finish_game("abcd1234", "1-0", "time")
        async with MoveWriter(store) as writer:
            for ply in (1, 2):  # the writer reports every failure and keeps serving
                with pytest.raises(StoreUnavailableError):
                    await writer.append(*move("abcd1234", ply))
    with pytest.raises(StoreUnavailableError):
        await upgrade_to_head(NOWHERE)


async def test_unopenable_sqlite(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'missing-dir' / 'hub.sqlite3'}"
    async with Store.from_url(url) as store:
        with pytest.raises(StoreUnavailableError):
            await store.player_by_name("alice")
    # After a failed connect aiosqlite stops its worker thread without waiting for it; let the
    # thread finish while this event loop still runs, or it reports to a closed loop.
    for thread in threading.enumerate():
        if "_connection_worker_thread" in thread.name:
            await asyncio.to_thread(thread.join, 5)


async def test_outage_and_recovery(proxy: TcpForwarder, pg_url: str, pg_schema: str) -> None:
    async with (
        Store.from_url(proxy.url(pg_url), schema=pg_schema) as store,
        MoveWriter(store) as writer,
    ):
        game_id = await new_game(store)
        await writer.append(*move(game_id, 1))

        await proxy.cut()  # the database "goes away"; pooled connections die
        with pytest.raises(StoreUnavailableError):
            await store.get_game(game_id)
        with pytest.raises(StoreUnavailableError):
            await writer.append(*move(game_id, 2))
        with pytest.raises(StoreUnavailableError):
            await store.finish_game(game_id, "1-0", "time")

        await proxy.restore()  # back: the same store and writer carry on
        await writer.append(*move(game_id, 2))
        await store.finish_game(game_id, "1-0", "time")
        game = await store.get_game(game_id)
        assert game is not None
        assert [m.ply for m in game.moves] == [1, 2]
        assert game.status == "finished"


async def test_killed_connection_is_replaced(pg_url: str, pg_schema: str, pg_dsn: str) -> None:
    """A server-side disconnect of a pooled connection costs nothing (pool_pre_ping)."""
    async with Store.from_url(pg_url, schema=pg_schema, pool_size=1) as store:
        game_id = await new_game(store)
        async with store.engine.connect() as connection:
            pid = (await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one()
        admin = await asyncpg.connect(pg_dsn)
        try:
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
        finally:
            await admin.close()
        await store.append_move(*move(game_id, 1))
        game = await store.get_game(game_id)
        assert game is not None and len(game.moves) == 1


async def test_a_postgresql_shutting_down_is_unavailable_not_an_error(tmp_path: Path) -> None:
    """While a private PostgreSQL waits to shut down (a smart shutdown waits for its last
    client), new connections get "the database system is shutting down" (SQLSTATE 57P03):
    an outage like any other, not an unexpected error (asyncpg does not raise it as a DB-API
    OperationalError)."""
    server = PostgresServer(tmp_path)
    await server.start()
    try:
        url = await server.create_database("outage")
        await upgrade_to_head(url)
        holder = await asyncpg.connect(host="127.0.0.1", port=server.port, user="postgres")
        assert server.child.process is not None
        server.child.process.send_signal(signal.SIGTERM)  # smart: waits for the holder
        async with Store.from_url(url, pool_size=1) as store:

            async def refusal() -> StoreUnavailableError | None:
                try:
                    await store.get_game("abcd1234")
                except StoreUnavailableError as error:
                    return error
                return None  # the server has not taken the signal yet

            error = await poll(refusal, lambda error: error is not None)
            assert "shutting down" in str(error)
        await holder.close()
    finally:
        await server.remove()

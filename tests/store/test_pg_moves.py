"""The PostgreSQL move path (server.store.pg_moves): asyncpg straight, same contract as the
SQLAlchemy path — all or none per batch, IntegrityError for a refused row, StoreUnavailableError
for a lost server, and a connection the server killed while idle is replaced."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta, timezone

import asyncpg
import pytest
from sqlalchemy.exc import IntegrityError
from support import pg_dsn

from server.rules import MoveRecord
from server.store import GameMove, Store, StoreUnavailableError
from server.store.pg_moves import PgMoveAppender
from server.store.writer import MoveWriter

ON_POSTGRESQL = pytest.mark.parametrize("empty_database", ["postgresql"], indirect=True)

MakeGame = Callable[..., Awaitable[str]]


def move(game_id: str, ply: int, **fields: object) -> GameMove:
    return game_id, MoveRecord(ply, f"a{ply}a{ply + 1}", f"m{ply}", 1_000 - ply, ply, **fields)  # type: ignore[arg-type]


async def stored_plies(store: Store, game_id: str) -> list[int]:
    game = await store.get_game(game_id)
    assert game is not None
    return [m.ply for m in game.moves]


@ON_POSTGRESQL
async def test_the_store_on_postgresql_writes_moves_through_asyncpg(store: Store) -> None:
    assert isinstance(store._moves, PgMoveAppender)


@ON_POSTGRESQL
async def test_a_batch_is_stored_with_every_field(store: Store, make_game: MakeGame) -> None:
    game_id = await make_game()
    at = datetime(2026, 11, 22, 18, 0, 1, 500_000, tzinfo=timezone(timedelta(hours=2)))
    await store.append_moves(
        [move(game_id, 1, played_at=at), move(game_id, 2, periods_left=3), move(game_id, 3)]
    )
    game = await store.get_game(game_id)
    assert game is not None
    first, second, _ = game.moves
    assert (first.ply, first.uci, first.display, first.clock_ms, first.spent_ms) == (
        1,
        "a1a2",
        "m1",
        999,
        1,
    )
    assert first.periods_left is None and second.periods_left == 3
    assert first.played_at == at.astimezone(UTC)


@ON_POSTGRESQL
async def test_a_refused_row_refuses_the_whole_batch(store: Store, make_game: MakeGame) -> None:
    game_id = await make_game()
    await store.append_moves([move(game_id, 1)])
    with pytest.raises(IntegrityError):  # ply 1 again: a duplicate
        await store.append_moves([move(game_id, 2), move(game_id, 1)])
    with pytest.raises(IntegrityError):  # no such game
        await store.append_moves([move(game_id, 2), move("nosuchgm", 1)])
    # A batch of one row goes as a plain execute: refused the same way.
    with pytest.raises(IntegrityError):
        await store.append_moves([move(game_id, 1)])
    with pytest.raises(IntegrityError):
        await store.append_moves([move("nosuchgm", 1)])
    assert await stored_plies(store, game_id) == [1]
    await store.append_moves([move(game_id, 2)])  # the connection is still good
    assert await stored_plies(store, game_id) == [1, 2]


@ON_POSTGRESQL
async def test_a_connection_killed_while_idle_is_replaced(
    store: Store, make_game: MakeGame
) -> None:
    game_id = await make_game()
    await store.append_moves([move(game_id, 1)])
    appender = store._moves
    assert appender is not None and len(appender._idle) == 1
    pid = appender._idle[0].get_server_pid()
    admin = await asyncpg.connect(pg_dsn())
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()
    await asyncio.sleep(0.2)  # the server's goodbye reaches the idle connection
    await store.append_moves([move(game_id, 2)])
    assert await stored_plies(store, game_id) == [1, 2]
    assert appender._idle[0].get_server_pid() != pid


async def test_an_unreachable_server_is_reported_and_nothing_is_queued() -> None:
    appender = PgMoveAppender("postgresql+asyncpg://postgres@127.0.0.1:1/test", connect_timeout=1)
    with pytest.raises(StoreUnavailableError):
        await appender.append_moves([move("abcd1234", 1)])
    assert appender._idle == []
    await appender.close()


@ON_POSTGRESQL
async def test_the_writer_shares_commits_over_the_direct_path(
    store: Store, make_game: MakeGame
) -> None:
    games = [await make_game() for _ in range(5)]
    async with MoveWriter(store, flushers=2) as writer:
        await asyncio.gather(
            *(writer.append(*move(game_id, ply)) for ply in (1, 2, 3) for game_id in games)
        )
        with pytest.raises(Exception, match="ply 2"):
            await writer.append(*move(games[0], 2))  # a duplicate: only this append fails
        assert writer.stats.moves == 15 and writer.stats.commits < 15
    for game_id in games:
        assert await stored_plies(store, game_id) == [1, 2, 3]

"""The PostgreSQL direct path (server.store.pg_direct): asyncpg straight, same contract as the
SQLAlchemy path — all or none per batch, IntegrityError for a refused row, StoreUnavailableError
for a lost server, and a connection the server killed while idle is replaced. A game's creation
and a plain end (unrated, or aborted) take it too; every other end falls through to the
SQLAlchemy path, which still tells an unknown game from a finished one and rates rated ones."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import asyncpg
import pytest
from sqlalchemy.exc import IntegrityError
from support import counting_commits, pg_dsn, wait_until

from server.rules import MoveRecord
from server.rules.time_control import Byoyomi
from server.store import (
    GameMove,
    GameStateError,
    Store,
    StoreUnavailableError,
    UnknownGameError,
    UnknownPlayerError,
)
from server.store.pg_direct import PgDirect
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
    assert isinstance(store._direct, PgDirect)


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
    appender = store._direct
    assert appender is not None and len(appender._idle) == 1
    pid = appender._idle[0].get_server_pid()
    admin = await asyncpg.connect(pg_dsn())
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()
    idle = appender._idle[0]
    await wait_until(idle.is_closed)  # the server's goodbye reached the idle connection
    await store.append_moves([move(game_id, 2)])
    assert await stored_plies(store, game_id) == [1, 2]
    assert appender._idle[0].get_server_pid() != pid


async def test_an_unreachable_server_is_reported_and_nothing_is_queued() -> None:
    appender = PgDirect("postgresql+asyncpg://postgres@127.0.0.1:1/test", connect_timeout=1)
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


async def create(store: Store, **fields: Any) -> str:
    return await store.create_game(
        variant="minishogi",
        start_fen="rbsgk/4p/5/P4/KGSBR[-] w 0 1",
        time_control=Byoyomi(600_000, 10_000, 3),
        first_name="alice",
        second_name="bob",
        **fields,
    )


@ON_POSTGRESQL
async def test_a_game_is_created_and_ended_without_sqlalchemy(store: Store) -> None:
    with counting_commits(store.engine) as commits:
        finished = await create(store, started=True)
        aborted = await create(store, game_id="abortme1")
        await store.finish_game(finished, "0-1", "checkmate", plies=17, final_fen="9/9 b 0 9")
        await store.abort_game(aborted, "abort", plies=0, final_fen="rbsgk")
    assert commits == []
    game = await store.get_game(finished)
    assert game is not None
    assert (game.status, game.result, game.termination, game.plies, game.final_fen) == (
        "finished",
        "0-1",
        "checkmate",
        17,
        "9/9 b 0 9",
    )
    assert game.time_control == Byoyomi(600_000, 10_000, 3)
    assert game.speed == "rapid" and not game.rated
    assert game.started_at == game.created_at and game.finished_at is not None
    assert game.finished_at.tzinfo is not None and game.finished_at >= game.created_at
    other = await store.get_game(aborted)
    assert other is not None
    assert (other.status, other.result, other.termination, other.plies) == (
        "aborted",
        None,
        "abort",
        0,
    )
    assert other.started_at is None


@ON_POSTGRESQL
async def test_refused_games_keep_the_stores_errors(
    store: Store, make_player: Callable[[str], Awaitable[int]]
) -> None:
    game_id = await create(store, game_id="taken123")
    with pytest.raises(GameStateError):
        await create(store, game_id="taken123")
    with pytest.raises(UnknownPlayerError):
        await create(store, first_player_id=999_999)
    await store.finish_game(game_id, "1-0", "resignation")
    with pytest.raises(GameStateError):  # over: the direct update changes nothing, and says so
        await store.finish_game(game_id, "0-1", "resignation")
    with pytest.raises(GameStateError):
        await store.abort_game(game_id)
    with pytest.raises(UnknownGameError):
        await store.finish_game("nosuch12", "1-0", "resignation")
    with pytest.raises(UnknownGameError):
        await store.abort_game("nosuch12")
    game = await store.get_game(game_id)
    assert game is not None and (game.status, game.result) == ("finished", "1-0")


@ON_POSTGRESQL
async def test_a_rated_end_takes_the_rating_transaction(
    store: Store, make_player: Callable[[str], Awaitable[int]]
) -> None:
    first, second = await make_player("carol"), await make_player("dave")
    game_id = await create(
        store, first_player_id=first, second_player_id=second, rated=True, started=True
    )
    with counting_commits(store.engine) as commits:
        change = await store.finish_game(game_id, "1-0", "checkmate")
    assert change is not None and len(commits) == 1
    assert change.first_after.rating > change.first_before.rating
    game = await store.get_game(game_id)
    assert game is not None
    assert game.status == "finished" and game.first_rating_after == round(change.first_after.rating)


async def test_an_unreachable_server_fails_a_games_writes_cleanly() -> None:
    direct = PgDirect("postgresql+asyncpg://postgres@127.0.0.1:1/test", connect_timeout=1)
    now = datetime.now(UTC)
    with pytest.raises(StoreUnavailableError):
        await direct.insert_game({"id": "abcd1234", "variant": "minishogi"})
    with pytest.raises(StoreUnavailableError):
        await direct.finish_unrated("abcd1234", "1-0", "resignation", now, None, None)
    with pytest.raises(StoreUnavailableError):
        await direct.abort("abcd1234", "abort", now, None, None)
    assert direct._idle == []
    await direct.close()


@ON_POSTGRESQL
async def test_a_burst_of_games_waits_for_a_few_connections(store: Store) -> None:
    direct = store._direct
    assert direct is not None
    games = await asyncio.gather(*(create(store, started=True) for _ in range(200)))
    await asyncio.gather(*(store.finish_game(g, "1-0", "resignation") for g in games))
    # Every connection used goes back to the idle list: without the limit, one per game would
    # (or PostgreSQL would refuse some: "too many clients").
    assert 1 <= len(direct._idle) <= 4
    assert len({c.get_server_pid() for c in direct._idle}) == len(direct._idle)
    for game_id in games[:: len(games) // 10]:
        game = await store.get_game(game_id)
        assert game is not None and game.status == "finished"


@ON_POSTGRESQL
async def test_a_burst_of_resumptions_uses_a_few_connections_of_its_own(store: Store) -> None:
    """A reconnect storm's logins: at most four connections, apart from the moves' and games'
    (whose commits wait for the write-ahead log), and theirs do not wait for it."""
    direct = store._direct
    assert direct is not None
    player = await store.create_player("Magnus", "h")
    tokens = [await store.create_session(player.id) for _ in range(50)]
    found = await asyncio.gather(*(store.resume_session(t) for t in tokens))
    assert found == [(player, [])] * len(tokens)
    assert 1 <= len(direct._login_idle) <= 4
    for connection in direct._login_idle:
        assert await connection.fetchval("SHOW synchronous_commit") == "off"
    game_id = await create(store, started=True)
    await store.append_moves([move(game_id, 1)])
    assert direct._idle
    for connection in direct._idle:
        assert await connection.fetchval("SHOW synchronous_commit") == "on"
    assert {c.get_server_pid() for c in direct._idle}.isdisjoint(
        c.get_server_pid() for c in direct._login_idle
    )

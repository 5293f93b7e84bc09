"""MoveWriter: group commit, acknowledgement only after commit, per-row fallback."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from sqlalchemy import func, select, text
from support import counting_commits

from server.rules import MoveRecord
from server.store import DuplicateMoveError, GameMove, MoveWriter, Store, UnknownGameError
from server.store.schema import game_moves

MakeGame = Callable[..., Awaitable[str]]


def move(game_id: str, ply: int, uci: str = "a1a2") -> GameMove:
    return game_id, MoveRecord(ply, uci, uci.upper(), 60_000 - ply, spent_ms=ply)


async def stored_moves(store: Store) -> list[tuple[str, int, str]]:
    async with store.engine.connect() as connection:
        rows = await connection.execute(
            select(game_moves.c.game_id, game_moves.c.ply, game_moves.c.uci).order_by(
                game_moves.c.game_id, game_moves.c.ply
            )
        )
        return [(row.game_id, row.ply, row.uci) for row in rows]


async def writing_transactions(store: Store) -> int:
    """PostgreSQL: how many transactions inserted the stored moves."""
    async with store.engine.connect() as connection:
        count = await connection.execute(text("SELECT count(DISTINCT xmin::text) FROM game_moves"))
        return int(count.scalar_one())


@pytest.mark.parametrize("flushers", [1, 2])
async def test_concurrent_games_share_commits(
    store: Store, make_game: MakeGame, flushers: int, backend: str
) -> None:
    game_ids = [await make_game() for _ in range(40)]
    plies = 6

    async def play(writer: MoveWriter, game_id: str) -> None:
        for ply in range(1, plies + 1):
            await writer.append(*move(game_id, ply))

    with counting_commits(store.engine) as commits:
        async with MoveWriter(store, flushers=flushers) as writer:
            await asyncio.gather(*(play(writer, game_id) for game_id in game_ids))
    if backend == "postgresql":
        # Moves skip SQLAlchemy there (server.store.pg_direct): count the transactions that
        # wrote them, one transaction id (xmin) per commit.
        commits = [1] * await writing_transactions(store)
    total = len(game_ids) * plies
    assert writer.stats.moves == total
    assert writer.stats.commits == len(commits)
    # 240 moves, 40 games in step: a handful of commits, not one per move.
    assert len(commits) <= total // 8
    assert writer.stats.largest_batch >= len(game_ids) // 2
    assert await stored_moves(store) == sorted(
        (game_id, ply, "a1a2") for game_id in game_ids for ply in range(1, plies + 1)
    )


async def test_acknowledged_moves_are_committed(
    store: Store, make_game: MakeGame, open_store: Callable[[], Store]
) -> None:
    """Once append returns, another connection pool sees the move."""
    game_ids = [await make_game() for _ in range(8)]
    observer = open_store()

    async def play(writer: MoveWriter, game_id: str) -> None:
        for ply in range(1, 5):
            await writer.append(*move(game_id, ply))
            game = await observer.get_game(game_id)
            assert game is not None and [m.ply for m in game.moves] == list(range(1, ply + 1))

    async with MoveWriter(store) as writer:
        await asyncio.gather(*(play(writer, game_id) for game_id in game_ids))


async def test_only_the_offending_appends_fail(store: Store, make_game: MakeGame) -> None:
    first, second = await make_game(), await make_game()
    await store.append_move(*move(first, 1, "x1x2"))
    async with MoveWriter(store) as writer:
        outcomes = await asyncio.gather(
            writer.append(*move(first, 1, "a1a2")),  # already stored
            writer.append(*move(first, 2, "b1b2")),
            writer.append(*move(second, 1, "c1c2")),
            writer.append(*move(second, 1, "d1d2")),  # same ply in the same batch
            writer.append(*move("nosuchgm", 1)),  # unknown game
            writer.append(*move(second, 2, "e1e2")),
            writer.append(first, MoveRecord(3, "f1f2", "F2", clock_ms=-1, spent_ms=0)),  # malformed
            return_exceptions=True,
        )
    assert [type(o).__name__ for o in outcomes] == [
        "DuplicateMoveError",
        "NoneType",
        "NoneType",
        "DuplicateMoveError",
        "UnknownGameError",
        "NoneType",
        "ValueError",
    ]
    assert isinstance(outcomes[0], DuplicateMoveError) and outcomes[0].ply == 1
    assert isinstance(outcomes[4], UnknownGameError)
    assert writer.stats.fallbacks >= 1
    assert await stored_moves(store) == sorted(
        [(first, 1, "x1x2"), (first, 2, "b1b2"), (second, 1, "c1c2"), (second, 2, "e1e2")]
    )


async def test_writer_keeps_working_after_a_failed_batch(store: Store, make_game: MakeGame) -> None:
    game_id = await make_game()
    async with MoveWriter(store) as writer:
        await writer.append(*move(game_id, 1))
        with pytest.raises(DuplicateMoveError):
            await writer.append(*move(game_id, 1))
        await writer.append(*move(game_id, 2))
    assert [ply for _, ply, _ in await stored_moves(store)] == [1, 2]


async def test_max_batch(store: Store, make_game: MakeGame) -> None:
    game_ids = [await make_game() for _ in range(30)]
    async with MoveWriter(store, max_batch=7) as writer:
        await asyncio.gather(*(writer.append(*move(game_id, 1)) for game_id in game_ids))
    assert writer.stats.largest_batch == 7
    assert writer.stats.commits >= 5
    assert writer.stats.moves == 30


async def test_close_writes_what_is_queued(store: Store, make_game: MakeGame) -> None:
    game_ids = [await make_game() for _ in range(10)]
    writer = MoveWriter(store)
    appends = [asyncio.create_task(writer.append(*move(game_id, 1))) for game_id in game_ids]
    await asyncio.sleep(0)  # let the appends queue
    await writer.close()
    assert all(task.done() and task.exception() is None for task in appends)
    assert len(await stored_moves(store)) == 10
    with pytest.raises(RuntimeError, match="closed"):
        await writer.append(*move(game_ids[0], 2))


async def test_cancelled_append_is_still_written(store: Store, make_game: MakeGame) -> None:
    """Cancelling the wait does not withdraw the move (documented behaviour)."""
    game_id = await make_game()
    writer = MoveWriter(store)
    task = asyncio.create_task(writer.append(*move(game_id, 1)))
    await asyncio.sleep(0)  # one loop turn: the append is queued (no clock involved)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await writer.close()
    assert await stored_moves(store) == [(game_id, 1, "a1a2")]


def test_bad_settings() -> None:
    with pytest.raises(ValueError):
        MoveWriter(None, max_batch=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        MoveWriter(None, flushers=0)  # type: ignore[arg-type]


async def test_empty_batch_is_a_no_op(store: Store) -> None:
    await store.append_moves([])
    async with store.engine.connect() as connection:
        count = (await connection.execute(select(func.count()).select_from(game_moves))).scalar()
    assert count == 0


async def test_submit_tells_the_caller_right_after_the_commit(
    store: Store, make_game: MakeGame, open_store: Callable[[], Store]
) -> None:
    """``submit`` needs no task: the move is queued before it returns, and the callback is told
    (by the flusher, in the turn the commit completes) only when another connection can read
    the move; a refused row is told its error, and a raising callback harms nobody else."""
    game_ids = [await make_game() for _ in range(4)]
    observer = open_store()
    told: list[tuple[str, BaseException | None]] = []
    all_told = asyncio.Event()

    def written(game_id: str) -> Callable[[BaseException | None], None]:
        def tell(error: BaseException | None) -> None:
            told.append((game_id, error))
            if len(told) == len(game_ids):
                all_told.set()
            if game_id == game_ids[0]:
                raise RuntimeError("a buggy caller")

        return tell

    async with MoveWriter(store) as writer:
        for game_id in game_ids:
            writer.submit(*move(game_id, 1), written(game_id))
        assert told == []  # nothing is committed without the loop
        await all_told.wait()
        assert sorted(told, key=lambda t: t[0]) == sorted((g, None) for g in game_ids)
        for game_id in game_ids:
            game = await observer.get_game(game_id)
            assert game is not None and [m.ply for m in game.moves] == [1]
        refused = asyncio.get_running_loop().create_future()
        writer.submit(*move(game_ids[1], 1), refused.set_result)
        assert isinstance(await refused, DuplicateMoveError)
    with pytest.raises(RuntimeError, match="closed"):
        writer.submit(*move(game_ids[0], 2), written(game_ids[0]))

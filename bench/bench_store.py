"""Move persistence throughput: committed moves per second for one process.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_store.py                       # both backends, default sizes
    .venv/bin/python bench/bench_store.py --backend postgresql --games 10 100 1000
    .venv/bin/python bench/bench_store.py --direct              # also without group commit
    .venv/bin/python bench/bench_store.py --insert-paths        # asyncpg insert paths alone

Each run simulates N games playing at once. Every game appends its moves one
after the other and awaits each acknowledgement before sending the next move,
as a player does, and an acknowledgement only comes after the move's
transaction committed. Moves go through :class:`MoveWriter` (group commit);
``--direct`` adds rows where every move is its own transaction
(``Store.append_move``), to show what grouping buys.

PostgreSQL runs in a throw-away schema of the ``test`` database, SQLite in a
temporary file (WAL, synchronous=FULL: see server/store/engine.py). At the
end the bench counts the stored rows: every acknowledged move must be there.

``--insert-paths`` times the ways asyncpg can send one batch of moves to PostgreSQL (the hot
write path of ``server/store/pg_direct.py``), one batch after the other on one connection:
``executemany`` and a plain ``execute`` of the same ``INSERT`` for one row, ``executemany`` for
5 and 20 rows, and an ``INSERT … SELECT * FROM unnest(…)`` of one array per column; wall time
and this process's CPU per batch.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import checkout  # noqa: F401  (this checkout's server on sys.path)
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from server.rules import MoveRecord
from server.rules.time_control import Fischer
from server.store import MoveWriter, Store
from server.store.migrate import upgrade_to_head
from server.store.schema import game_moves

PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


@dataclass
class Result:
    backend: str
    mode: str
    games: int
    moves: int
    seconds: float
    commits: int
    p50_ms: float
    p99_ms: float

    @property
    def per_second(self) -> float:
        return self.moves / self.seconds


async def run_games(
    store: Store, games: int, plies: int, append: Callable[[str, MoveRecord], Awaitable[None]]
) -> tuple[float, list[float]]:
    """Plays ``games`` games of ``plies`` moves at once; returns wall time and ack latencies."""
    game_ids = [
        await store.create_game(
            variant="minishogi",
            start_fen="rbsgk/4p/5/P4/KGSBR[-] w 0 1",
            time_control=Fischer(180_000, 2_000),
            first_name=f"first{index}",
            second_name=f"second{index}",
        )
        for index in range(games)
    ]
    latencies: list[float] = []

    async def play(game_id: str) -> None:
        clock = 180_000
        for ply in range(1, plies + 1):
            clock -= 500
            record = MoveRecord(ply, "a1a2", "P-2a", max(clock, 0), spent_ms=500)
            sent = time.perf_counter()
            await append(game_id, record)
            latencies.append(time.perf_counter() - sent)

    started = time.perf_counter()
    await asyncio.gather(*(play(game_id) for game_id in game_ids))
    return time.perf_counter() - started, latencies


async def count_moves(store: Store) -> int:
    async with store.engine.connect() as connection:
        return int(
            (await connection.execute(select(func.count()).select_from(game_moves))).scalar_one()
        )


async def measure(
    backend: str, url: str, schema: str | None, games: int, plies: int, direct: bool, flushers: int
) -> Result:
    await upgrade_to_head(url, schema=schema)
    async with Store.from_url(url, schema=schema, pool_size=20) as store:
        before = await count_moves(store)
        if direct:
            seconds, latencies = await run_games(store, games, plies, store.append_move)
            commits = games * plies
        else:
            async with MoveWriter(store, flushers=flushers) as writer:
                seconds, latencies = await run_games(store, games, plies, writer.append)
            commits = writer.stats.commits
        stored = await count_moves(store) - before
    if stored != games * plies:
        raise SystemExit(f"{stored} moves stored, {games * plies} acknowledged")
    latencies.sort()
    return Result(
        backend=backend,
        mode="direct" if direct else f"MoveWriter x{flushers}",
        games=games,
        moves=games * plies,
        seconds=seconds,
        commits=commits,
        p50_ms=1000 * statistics.median(latencies),
        p99_ms=1000 * latencies[int(0.99 * (len(latencies) - 1))],
    )


async def with_pg_schema(pg_url: str, body: Callable[[str], Awaitable[None]]) -> None:
    dsn = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    try:
        await body(schema)
    finally:
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await connection.close()


async def insert_paths(pg_url: str, batches: int = 3000) -> None:
    """See the module docstring (``--insert-paths``)."""
    from server.store.pg_direct import INSERT_MOVES
    from server.store.records import MOVE_COLUMNS, move_row

    # The same insert with one array per column: one statement however many rows.
    insert_unnest = (
        f"INSERT INTO game_moves ({', '.join(MOVE_COLUMNS)}) SELECT * FROM unnest("
        "$1::varchar[], $2::int[], $3::varchar[], $4::varchar[], $5::bigint[], $6::int[],"
        " $7::bigint[], $8::timestamptz[])"
    )

    async def body(schema: str) -> None:
        await upgrade_to_head(pg_url, schema=schema)
        async with Store.from_url(pg_url, schema=schema) as store:
            game_ids = [
                await store.create_game(
                    variant="minishogi",
                    start_fen="rbsgk/4p/5/P4/KGSBR[-] w 0 1",
                    time_control=Fischer(180_000, 2_000),
                    first_name="first",
                    second_name="second",
                )
                for _ in range(20)
            ]
        dsn = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
        connection = await asyncpg.connect(dsn, server_settings={"search_path": schema})
        plies = dict.fromkeys(game_ids, 0)

        def batch(size: int) -> list[tuple[object, ...]]:
            rows = []
            for game_id in game_ids[:size]:
                plies[game_id] += 1
                rows.append(move_row(game_id, MoveRecord(plies[game_id], "a1a2", "P-2a", 1, 1)))
            return rows

        async def one_execute(rows: list[tuple[object, ...]]) -> None:
            await connection.execute(INSERT_MOVES, *rows[0])

        async def many(rows: list[tuple[object, ...]]) -> None:
            await connection.executemany(INSERT_MOVES, rows)

        async def unnest(rows: list[tuple[object, ...]]) -> None:
            await connection.execute(insert_unnest, *map(list, zip(*rows, strict=True)))

        try:
            for name, size, send in (
                ("executemany", 1, many),
                ("execute", 1, one_execute),
                ("executemany", 5, many),
                ("executemany", 20, many),
                ("unnest", 1, unnest),
                ("unnest", 5, unnest),
                ("unnest", 20, unnest),
            ):
                cpu, wall = time.process_time(), time.perf_counter()
                for _ in range(batches):
                    await send(batch(size))
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                print(
                    f"{name:<12} {size:>3} rows: {1e6 * wall / batches:7.0f} µs wall, "
                    f"{1e6 * cpu / batches:6.1f} µs CPU per batch",
                    flush=True,
                )
        finally:
            await connection.close()

    await with_pg_schema(pg_url, body)


async def main_async(args: argparse.Namespace) -> list[Result]:
    results: list[Result] = []
    backends = ["postgresql", "sqlite"] if args.backend == "both" else [args.backend]
    modes = [False, True] if args.direct else [False]
    for backend in backends:
        for games in args.games:
            for direct in modes:
                if backend == "postgresql":

                    async def body(schema: str, games: int = games, direct: bool = direct) -> None:
                        results.append(
                            await measure(
                                "postgresql",
                                args.pg_url,
                                schema,
                                games,
                                args.plies,
                                direct,
                                args.flushers,
                            )
                        )

                    await with_pg_schema(args.pg_url, body)
                else:
                    with tempfile.TemporaryDirectory() as directory:
                        url = f"sqlite+aiosqlite:///{Path(directory) / 'bench.sqlite3'}"
                        results.append(
                            await measure(
                                "sqlite", url, None, games, args.plies, direct, args.flushers
                            )
                        )
                print(format_row(results[-1]), flush=True)
    return results


HEADER = (
    f"{'backend':<11} {'mode':<14} {'games':>6} {'moves':>7} {'moves/s':>9} "
    f"{'commits':>8} {'moves/commit':>12} {'ack p50':>9} {'ack p99':>9}"
)


def format_row(result: Result) -> str:
    return (
        f"{result.backend:<11} {result.mode:<14} {result.games:>6} {result.moves:>7} "
        f"{result.per_second:>9,.0f} {result.commits:>8} {result.moves / result.commits:>12.1f} "
        f"{result.p50_ms:>7.1f}ms {result.p99_ms:>7.1f}ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("postgresql", "sqlite", "both"), default="both")
    parser.add_argument(
        "--games", type=int, nargs="+", default=[10, 100, 500], help="concurrent games"
    )
    parser.add_argument("--plies", type=int, default=40, help="moves per game")
    parser.add_argument("--flushers", type=int, default=1, help="MoveWriter batches in flight")
    parser.add_argument("--direct", action="store_true", help="also one transaction per move")
    parser.add_argument("--pg-url", default=PG_URL)
    parser.add_argument(
        "--insert-paths", action="store_true", help="time asyncpg's ways to insert a batch"
    )
    args = parser.parse_args()
    if args.insert_paths:
        asyncio.run(insert_paths(args.pg_url))
        return
    print(HEADER, flush=True)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()

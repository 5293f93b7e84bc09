"""A game's two rows of writes on PostgreSQL: its creation and its end, direct and through
SQLAlchemy.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_game_rows.py                  # 300 games per path, 3 rounds

The hub writes two statements for every game besides its moves: ``create_game`` when the game
starts (stored already started) and ``finish_game`` or ``abort_game`` when it ends. On
PostgreSQL the store sends them straight through asyncpg (``server/store/pg_direct.py``); the
same store built without its direct path runs them as SQLAlchemy transactions (a pool checkout
with its pre-ping, ``BEGIN``, the statement, ``COMMIT``), as every store did before. Each round
creates N games one after the other, then finishes them all (unrated), then creates and aborts
N more, on each path in turn; reported: this process's CPU and the wall time per call, the
best round of each. A fresh database is created and dropped (tests/support.py).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support import create_database, drop_database  # noqa: E402

from server.rules.time_control import Fischer  # noqa: E402
from server.store import (  # noqa: E402
    Store,
    create_engine,
    new_game_id,
)
from server.store.migrate import upgrade_to_head  # noqa: E402

CONTROL = Fischer(60_000)


async def timed(calls: list[Callable[[], Awaitable[object]]]) -> tuple[float, float]:
    """µs of CPU and of wall time per call, the calls run one after the other."""
    wall, cpu = time.perf_counter(), time.process_time()
    for call in calls:
        await call()
    count = len(calls)
    return 1e6 * (time.process_time() - cpu) / count, 1e6 * (time.perf_counter() - wall) / count


async def one_round(store: Store, games: int) -> dict[str, tuple[float, float]]:
    ids = [new_game_id() for _ in range(2 * games)]

    def create(game_id: str) -> Callable[[], Awaitable[object]]:
        return lambda: store.create_game(
            game_id=game_id,
            variant="minishogi",
            start_fen="rbsgk/4p/5/P4/KGSBR[-] w 0 1",
            time_control=CONTROL,
            first_name="first",
            second_name="second",
            started=True,
        )

    def finish(game_id: str) -> Callable[[], Awaitable[object]]:
        return lambda: store.finish_game(game_id, "1-0", "resignation", plies=15, final_fen="x")

    def abort(game_id: str) -> Callable[[], Awaitable[object]]:
        return lambda: store.abort_game(game_id, "abort", plies=0, final_fen="x")

    created = await timed([create(g) for g in ids])
    finished = await timed([finish(g) for g in ids[:games]])
    aborted = await timed([abort(g) for g in ids[games:]])
    return {"create": created, "finish": finished, "abort": aborted}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    url = await create_database("bench_game_rows")
    try:
        await upgrade_to_head(url)
        # The second store is the first without its direct path: every write through SQLAlchemy.
        async with Store.from_url(url) as direct, Store(create_engine(url)) as plain:
            assert direct._direct is not None
            best: dict[str, dict[str, tuple[float, float]]] = {"direct": {}, "sqlalchemy": {}}
            for _ in range(args.rounds):
                for name, store in (("direct", direct), ("sqlalchemy", plain)):
                    for call, (cpu, wall) in (await one_round(store, args.games)).items():
                        kept = best[name].get(call)
                        if kept is None or cpu < kept[0]:
                            best[name][call] = (cpu, wall)
            for name, calls in best.items():
                print(
                    f"{name:10} "
                    + ", ".join(
                        f"{call} {cpu:.0f} µs CPU / {wall:.0f} µs"
                        for call, (cpu, wall) in calls.items()
                    ),
                    flush=True,
                )
    finally:
        await drop_database(url)


if __name__ == "__main__":
    try:
        import uvloop
    except ImportError:
        asyncio.run(main())
    else:
        uvloop.run(main())

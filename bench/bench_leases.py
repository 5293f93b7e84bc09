"""How long a node takes to renew its game leases in Redis: one call per lease (as
``Ownership.renew_all`` did, 16 at once) against one batch (``GameLeases.hold_many``: a script
call per 500 leases).

Run by hand (never in CI)::

    .venv/bin/python bench/bench_leases.py                    # 500 and 1,000 leases
    .venv/bin/python bench/bench_leases.py --leases 500 1000 2000 --busy-ms 5

``--busy-ms B`` keeps the event loop as busy as a hub serving games: a task holds it for B ms,
lets it go for as long, again and again (``time.sleep``: blocking, not burning a core), so
each await of a Redis answer waits for the end of a turn, as it does in a hub under load.
Reported per way and size: the median and the worst of ``--rounds`` renewals of every lease.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from redis.asyncio import Redis  # noqa: E402

from server.bus import Cluster, GameLeases  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/0"
NODE = "bench-node"
TTL_MS = 3000
PER_LEASE_CONCURRENCY = 16
"""The calls at once of the renewal before the batch (``RENEW_CONCURRENCY``)."""


async def one_call_per_lease(leases: GameLeases, games: list[str]) -> None:
    """The renewal before the batch: ``renew`` each lease, ``acquire`` it if that failed."""
    slots = asyncio.Semaphore(PER_LEASE_CONCURRENCY)

    async def renew(game_id: str) -> None:
        async with slots:
            if not await leases.renew(game_id, NODE, TTL_MS):
                await leases.acquire(game_id, NODE, TTL_MS)

    await asyncio.gather(*(renew(game_id) for game_id in games))


async def one_batch(leases: GameLeases, games: list[str]) -> None:
    lost = await leases.hold_many(games, NODE, TTL_MS)
    assert not lost, lost


async def busy_loop(busy_ms: float) -> None:
    while True:
        time.sleep(busy_ms / 1000)
        await asyncio.sleep(busy_ms / 1000)


async def timed(
    renew: Callable[[GameLeases, list[str]], Awaitable[None]],
    leases: GameLeases,
    games: list[str],
    rounds: int,
) -> list[float]:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await renew(leases, games)
        times.append(1000 * (time.perf_counter() - started))
    return times


async def main_async(args: argparse.Namespace) -> None:
    prefix = f"bench:leases:{uuid.uuid4().hex}:"
    cluster = Cluster.redis(REDIS_URL, prefix=prefix)
    busy = asyncio.create_task(busy_loop(args.busy_ms)) if args.busy_ms else None
    ways = {"one call per lease (16 at once)": one_call_per_lease, "one batch": one_batch}
    print(
        f"renewing every lease of a node, {args.rounds} rounds each; the loop busy "
        f"{args.busy_ms:g} ms of every {2 * args.busy_ms:g} ms"
        if args.busy_ms
        else f"renewing every lease of a node, {args.rounds} rounds each; the loop idle",
        flush=True,
    )
    print("| leases | way | median | worst |\n|---:|---|---:|---:|")
    try:
        for count in args.leases:
            games = [f"game{i:06d}" for i in range(count)]
            await cluster.leases.hold_many(games, NODE, TTL_MS)
            for name, renew in ways.items():
                times = await timed(renew, cluster.leases, games, args.rounds)
                print(
                    f"| {count:,} | {name} | {statistics.median(times):.1f} ms "
                    f"| {max(times):.1f} ms |",
                    flush=True,
                )
    finally:
        if busy is not None:
            busy.cancel()
        await cluster.close()
        client = Redis.from_url(REDIS_URL)
        keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=1000)]
        if keys:
            await client.delete(*keys)
        await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--leases", type=int, nargs="+", default=[500, 1000])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--busy-ms", type=float, default=0.0, help="loop busy half the time")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()

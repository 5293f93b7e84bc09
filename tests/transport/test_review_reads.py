"""Expensive anonymous reads (since 4a2bfca): a flood of stored-game reviews from one address
is refused with 429 past its limits, a finished game is replayed once and its answers served
from the cache (the same bytes), replays wait their turn behind the gate, and the players of a
running game beside the flood keep their move acknowledgements."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Generator

import aiohttp
import pytest
from test_review import random_moves, save_game
from ws_support import OpenClient, StartApp, start_game

from server.transport.review_reads import REPLAY_SLICE_S, ReplayQueueFull, ReviewReads, run_sliced

LIMITS = {
    "review_reads_per_s": 0.01,  # no token comes back while the test runs
    "review_reads_burst": 30,
    "review_replays_per_s": 0.01,
    "review_replays_burst": 4,
    # the flood's 200 requests at once are over the connections an address may hold (a limit
    # of its own, tested in test_transport_abuse_connections.py): this test is about reads
    "max_connections_per_address": 1000,
}


async def _get(
    http: aiohttp.ClientSession, url: str
) -> tuple[int, bytes, aiohttp.typedefs.LooseHeaders]:
    async with http.get(url) as answer:
        return answer.status, await answer.read(), answer.headers


async def test_a_review_flood_is_limited_cached_and_leaves_the_moves_alone(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(**LIMITS)
    moves = await asyncio.to_thread(random_moves, "daishogi", 7, 120)
    finished, _ = await save_game(app.store, variant="daishogi", moves=moves)
    running, _ = await save_game(app.store, variant="daishogi", moves=moves[:60], result=None)
    first, second = await open_client(app, "first"), await open_client(app, "second")
    for client in (first, second):
        await client.guest()
    game = await start_game(first, second)
    base = f"http://127.0.0.1:{app.port}/api/games/"
    flood = [f"{base}{finished}", *(f"{base}{finished}?ply={p}" for p in range(0, 120, 10))]
    flood += [f"{base}{running}?ply={p}" for p in range(10)]  # never cached: replays
    flood = (flood * 10)[:200]
    acks: list[float] = []

    async def honest_moves() -> None:
        for _ in range(12):
            started = time.perf_counter()
            await game.play(game.legal[0])
            acks.append(time.perf_counter() - started)

    async with aiohttp.ClientSession() as http:
        reference = await _get(http, f"{base}{finished}")
        results, _ = await asyncio.gather(
            asyncio.gather(*(_get(http, url) for url in flood)), honest_moves()
        )
        statuses = [status for status, _, _ in results]
        assert set(statuses) <= {200, 429} and statuses.count(429) >= 150, statuses
        for status, body, headers in results:
            if status == 429:
                assert headers["Retry-After"] == "100", headers  # ceil(1 / 0.01)
                assert b'"code":"rate_limited"' in body
            elif body.startswith(b'{"id":"' + finished.encode()) and b"position" not in body:
                assert body == reference[1]  # a cache hit: the very bytes of the first answer
        # Another address is served meanwhile, from the cache, with the same bytes.
        async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
        ) as other:
            status, body, _ = await _get(other, f"{base}{finished}")
            assert (status, body) == (200, reference[1])
    # The finished game was replayed once; the running one at most its replay burst.
    assert app.server.reads.replays <= 1 + LIMITS["review_replays_burst"], app.server.reads.replays
    assert max(acks) < 2.0 and sorted(acks)[len(acks) // 2] < 0.5, acks


async def test_websocket_and_ics_reads_are_limited_per_requester(
    start_app: StartApp, open_client: OpenClient, ics_guest
) -> None:  # type: ignore[no-untyped-def]
    app = await start_app(ics=True, **{**LIMITS, "review_reads_burst": 5})
    finished, _ = await save_game(app.store, moves=random_moves("minishogi", 3, 20))
    client = await open_client(app)
    answers = [await client.request("review", {"game": finished}) for _ in range(7)]
    assert [a["t"] for a in answers] == ["review"] * 5 + ["error"] * 2, answers
    assert answers[-1]["d"]["code"] == "rate_limited"
    assert answers[0]["d"] == answers[4]["d"]
    await client.guest()  # a guest is still counted by its address
    assert (await client.request("review", {"game": finished}))["t"] == "error"
    await app.accounts.register("reader", "correct horse")
    other = await open_client(app)
    await other.login("reader")  # a registered player: counted per account
    assert (await other.request("review", {"game": finished}))["t"] == "review"
    # ICS examine replays each time: counted against the guest's address's replay limit
    # (the websocket's first review above took one).
    ics = await ics_guest(app)
    for _ in range(LIMITS["review_replays_burst"] - 1):
        await ics.send(f"examine {finished}")
        await ics.expect(r"^Starting to examine game \d+\.$")
        await ics.send("unexamine")
    await ics.send(f"examine {finished}")
    await ics.expect(r"^Too many stored games examined; try again in 100 s\.$")


async def test_replays_take_turns_in_slices_and_a_full_queue_is_refused() -> None:
    reads = ReviewReads(replays_at_once=1, replay_queue=1)
    turns = 0

    def steps() -> Generator[None, None, str]:
        for _ in range(20):
            deadline = time.perf_counter() + 0.001  # a millisecond of CPU per step
            while time.perf_counter() < deadline:
                pass
            yield
        return "done"

    async def other_callbacks() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    counting = asyncio.create_task(other_callbacks())
    await asyncio.sleep(0)
    assert await run_sliced(steps()) == "done"
    counting.cancel()
    assert turns >= 20 * 0.001 / REPLAY_SLICE_S - 2, turns  # the loop ran between the slices
    async with reads.turn():
        waiter = asyncio.create_task(reads.turn().__aenter__())
        await asyncio.sleep(0)
        with pytest.raises(ReplayQueueFull):
            await reads.turn().__aenter__()
    await waiter  # it had its turn once the first ended

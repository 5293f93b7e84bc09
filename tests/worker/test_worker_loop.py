"""The worker loop against a real (tiny) fishnet server: move and analysis jobs, SIGTERM
gives the job back, SIGKILL mid-analysis lets the lease run out and a second worker finish."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.rules import Game, get_variant
from server.worker.computer import game_of
from server.worker.worker import Worker, WorkerConfig

from .fake_fishnet import KEY, FakeFishnet

pytestmark = pytest.mark.timeout(200)  # generous bounds on events: a loaded machine is slow, never flaky



def _mini_game(plies: int = 12) -> list[str]:
    import random

    rng = random.Random(5)
    game = Game(get_variant("minishogi"))
    while game.ply < plies and game.legal_moves():
        game.play(rng.choice(game.legal_moves()))
    return game.moves


MINI_GAME = _mini_game()


@pytest.fixture
async def fishnet() -> AsyncIterator[FakeFishnet]:
    server = FakeFishnet()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@contextlib.asynccontextmanager
async def running_worker(url: str) -> AsyncIterator[Worker]:
    worker = Worker(WorkerConfig(url=url, key=KEY, slots=1, nice=0, name="test"))
    task = asyncio.create_task(worker.run())
    try:
        yield worker
    finally:
        worker.stop()
        await task


async def worker_process(url: str, nice: int = 0) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.worker", "--url", url, "--key", KEY, "--slots", "1", "--nice", str(nice),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )


async def stop_process(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
    await proc.wait()


CLOCK = {"kind": "fischer", "first_ms": 6_000, "second_ms": 6_000, "increment_ms": 100, "byoyomi_ms": 0, "periods": 0}
BYOYOMI = {"kind": "byoyomi", "first_ms": 0, "second_ms": 0, "increment_ms": 0, "byoyomi_ms": 500, "periods": 1}


async def test_move_jobs_in_every_variant_get_legal_moves(fishnet: FakeFishnet) -> None:
    jobs = {}
    for variant, moves, level, clock in [
        ("minishogi", "e1e4", 1, CLOCK),
        ("shoshogi", "", 8, BYOYOMI),
        ("wildcastle", "e2e4", 4, CLOCK),
        ("spartan", "", 8, CLOCK),
        ("daishogi", "g5g6", 1, None),
    ]:
        start = get_variant(variant).start_fen
        jobs[variant] = (fishnet.add({"type": "move", "variant": variant, "position": start, "moves": moves, "level": level, "clock": clock}), moves)
    async with running_worker(fishnet.url):
        for variant, (job, moves) in jobs.items():
            await asyncio.wait_for(job.done.wait(), 90)
            game = Game(get_variant(variant))
            for m in moves.split():
                game.play(m)
            assert job.result in game.legal_moves(), (variant, job.result)
    hello = fishnet.acquires[0]["worker"]
    assert hello["name"] == "test" and set(hello["variants"]) == {"minishogi", "shoshogi", "wildcastle", "spartan", "daishogi"}


async def test_a_job_over_on_the_server_is_dropped_at_the_next_keepalive() -> None:
    """Dai Shogi level 8 without a clock thinks 15 s (after each side's first move, which
    thinks at most 5 s: a game's third ply here), many times the 1 s lease: the worker keeps
    the job alive. Once the server has ended it (its game ended), the next keepalive is a 404:
    the search is abandoned, HaChu killed (a driver cut off mid-search is not asked again),
    and the slot serves the next job with the engine it needs."""
    fishnet = FakeFishnet(lease_s=1.0)
    await fishnet.start()
    try:
        start = get_variant("daishogi").start_fen
        opening = " ".join(sorted(Game(get_variant("daishogi")).legal_moves())[:1])
        opening += " " + sorted(game_of("daishogi", None, opening).legal_moves())[0]
        long = fishnet.add({"type": "move", "variant": "daishogi", "position": start, "moves": opening, "level": 8, "clock": None})
        async with running_worker(fishnet.url) as worker:
            await asyncio.wait_for(long.kept_alive.wait(), 60)
            (computer,) = worker.computers
            assert "hachu" in computer._drivers
            fishnet.cancel(long)
            quick = fishnet.add({"type": "move", "variant": "minishogi", "position": get_variant("minishogi").start_fen, "moves": "", "level": 1, "clock": None})
            await asyncio.wait_for(quick.done.wait(), 60)
            assert quick.result in Game(get_variant("minishogi")).legal_moves()
            assert long.result is None and "hachu" not in computer._drivers
    finally:
        await fishnet.stop()


async def test_analysis_scores_are_from_the_first_players_view(fishnet: FakeFishnet) -> None:
    # sente is a rook, a bishop and more ahead; gote to move at ply 1
    fen = "4k/5/5/5/RBGSK[RBP] w - - 0 1"
    job = fishnet.add({"type": "analysis", "variant": "minishogi", "position": fen, "moves": "e1d2 e5d5",
                       "limits": {"movetime_ms": 80, "depth": None}, "skip_plies": []})
    async with running_worker(fishnet.url):
        await asyncio.wait_for(job.done.wait(), 90)
    entries = job.result
    assert [e["ply"] for e in entries] == [0, 1, 2]
    for e in entries:
        score = e["score"]
        assert score.get("cp", 0) > 300 or score.get("mate", 0) > 0, e
        assert e["depth"] > 0 and e["pv"].split()[0] == e["best"]
    game = Game(get_variant("minishogi"), fen)
    assert entries[0]["best"] in game.legal_moves()


async def test_jobs_no_worker_can_do_are_answered_empty_not_handed_round(fishnet: FakeFishnet) -> None:
    bad_move = fishnet.add({"type": "move", "variant": "minishogi", "position": "5/5", "moves": "", "level": 1, "clock": None})
    bad_analysis = fishnet.add({"type": "analysis", "variant": "nosuch", "position": "", "moves": "", "limits": {}})
    custom_dai = fishnet.add({"type": "move", "variant": "daishogi", "position": "4k10/15/15/15/15/15/15/15/15/15/15/15/15/15/4K10 w - - 0 1",
                              "moves": "", "level": 1, "clock": None})
    sentinel = fishnet.add({"type": "move", "variant": "minishogi", "position": get_variant("minishogi").start_fen, "moves": "", "level": 1, "clock": None})
    async with running_worker(fishnet.url):
        for job in (bad_move, bad_analysis, custom_dai, sentinel):
            await asyncio.wait_for(job.done.wait(), 90)
    assert bad_move.result is None and custom_dai.result is None
    assert bad_analysis.result == []
    assert sentinel.result in Game(get_variant("minishogi")).legal_moves()
    # each handed out once, move jobs first
    assert [j.holder for j in (bad_move, custom_dai, sentinel, bad_analysis)] == [1, 2, 3, 4]


def children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


async def test_sigterm_gives_the_job_back_and_the_worker_runs_below_the_hub(fishnet: FakeFishnet) -> None:
    job = fishnet.add({"type": "analysis", "variant": "minishogi", "position": get_variant("minishogi").start_fen,
                       "moves": " ".join(MINI_GAME), "limits": {"movetime_ms": 300, "depth": None}})
    proc = await worker_process(fishnet.url, nice=2)
    try:
        await asyncio.wait_for(job.progressed.wait(), 90)
        base = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == min(19, base + 2)
        engines = children(proc.pid)
        assert engines and all(os.getpriority(os.PRIO_PROCESS, p) == min(19, base + 2) for p in engines)
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(job.aborted.wait(), 90)
        assert await asyncio.wait_for(proc.wait(), 90) == 0
        assert not job.done.is_set()
    finally:
        await stop_process(proc)


async def test_a_worker_killed_mid_analysis_loses_nothing(fishnet: FakeFishnet) -> None:
    fishnet.lease_s = 3.0  # each partial analysis (every second) renews it
    job = fishnet.add({"type": "analysis", "variant": "minishogi", "position": get_variant("minishogi").start_fen,
                       "moves": " ".join(MINI_GAME), "limits": {"movetime_ms": 100, "depth": None}})
    first = await worker_process(fishnet.url)
    second = None
    try:
        await asyncio.wait_for(job.progressed.wait(), 90)
        killed_holder = job.partial_holders[0]
        first.send_signal(signal.SIGKILL)
        await first.wait()
        second = await worker_process(fishnet.url)
        await asyncio.wait_for(job.done.wait(), 90)
        # the lease ran out and the second worker took the job over and finished it
        assert job.done_by > killed_holder
        game = Game(get_variant("minishogi"))
        for m in MINI_GAME:
            game.play(m)
        plies = [e["ply"] for e in job.result]
        assert plies == list(range(len(MINI_GAME) + (0 if game.outcome() else 1)))
    finally:
        await stop_process(first)
        if second is not None:
            await stop_process(second)

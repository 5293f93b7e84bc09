"""Move jobs that think longer than their lease (``/fishnet/keepalive``), with the REAL HaChu and
REAL worker processes against a live server: a search longer than the lease keeps its job (a
second worker standing by never gets it), and a search whose game ends is abandoned at the next
keepalive, its core free for the next game at once."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from computer_support import HumanGame
from support import poll, wait_until
from worker.engines_helpers import wrapper
from worker_support import StartWorker
from ws_support import Client, OpenClient, StartApp

from server.app import App
from server.store.jobs import Job

LEASE_S = 1.5
"""The move jobs' lease here: far below what level 8 thinks on these clocks."""


async def computer_game(human: Client, variant: str, level: int, base_s: int) -> HumanGame:
    """A game vs the computer in which the computer moves first."""
    answer = await human.ok(
        "challenge_ai",
        {
            "variant": variant,
            "level": level,
            "colour": "second",
            "tc": {"kind": "fischer", "base_s": base_s, "inc_s": 0},
        },
    )
    return HumanGame(human, answer["game"])


async def computer_searching(
    app: App, open_client: OpenClient, variant: str, level: int, base_s: int
) -> tuple[HumanGame, Job]:
    """A guest's game vs the computer, which moves first, once a worker holds that move job."""
    human = await open_client(app, "human")
    await human.guest()
    game = await computer_game(human, variant, level, base_s)
    while game.turn is None:
        await game.next_event()
    job = await poll(lambda: app.store.latest_job(game.game_id, "move"))
    assert job is not None
    await poll(lambda: app.store.job(job.id), lambda j: j is not None and j.state == "acquired")
    return game, job


async def test_a_search_longer_than_the_lease_keeps_its_job(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker, tmp_path: Path
) -> None:
    """HaChu answers every move 3 s late here (a wrapper: a starved search), twice the 1.5 s
    lease; level 8's first move on a 4-minute clock (5 s at most) waits up to 15 s for it (3 ×
    its budget). The worker keeps the job alive,
    so the second worker, polling all along, never takes it: one attempt, the move played."""
    slow = wrapper(tmp_path, "hachu-slow", "hachu", "slow-3")
    app = await start_app(move_lease_s=LEASE_S, fishnet_poll_s=1)
    await start_worker(app, "searcher", f"--program=hachu={slow}")
    game, job = await computer_searching(app, open_client, "daishogi", 8, 240)
    await start_worker(app, "bystander")  # would take the job if its lease ran out
    while game.computer_moves == 0:
        await game.next_event()
    done = await app.store.job(job.id)
    assert done is not None and done.state == "done" and done.worker == "searcher"
    assert done.attempts == 1, "the lease ran out and another worker took the job"
    assert done.result is not None and done.result.get("bestmove") == game.moves[0]
    assert done.updated_at - done.created_at > timedelta(seconds=2 * LEASE_S)
    await game.client.ok("resign", {"game": game.game_id})


async def test_a_search_whose_game_ended_is_abandoned_and_its_core_freed(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker, tmp_path: Path
) -> None:
    """Dai Shogi level 8 on a 30-minute clock thinks up to 30 s a move (its first move at most
    5 s: HaChu answers it 20 s late here, a long search). The human resigns while it searches:
    the job is cancelled, the worker's next keepalive is answered 404, it kills the search and
    says so, and its only slot plays the next game's first move."""
    slow = wrapper(tmp_path, "hachu-slower", "hachu", "slow-20")
    app = await start_app(move_lease_s=LEASE_S, fishnet_poll_s=1)
    worker = await start_worker(app, "only", f"--program=hachu={slow}")
    game, job = await computer_searching(app, open_client, "daishogi", 8, 1800)
    await game.client.ok("resign", {"game": game.game_id})
    while game.end is None:
        await game.next_event()
    assert game.computer_moves == 0
    await wait_until(lambda: "search abandoned" in worker.log.read_text(), timeout=30)
    cancelled = await app.store.job(job.id)
    assert cancelled is not None and cancelled.state == "done" and cancelled.result is None
    # the freed slot serves the next game (level 1: a quick move)
    other = await open_client(app, "other")
    await other.guest()
    quick = await computer_game(other, "minishogi", 1, 300)
    while quick.computer_moves == 0:
        await quick.next_event()
    assert worker.process.returncode is None
    await other.ok("resign", {"game": quick.game_id})

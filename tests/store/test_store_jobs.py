"""The engine workers' job queue (server.store.jobs) on PostgreSQL and SQLite.

Leases are tested with an injected clock: ``now`` moves, nobody sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from server.store import Store

T0 = datetime(2026, 11, 27, 8, 0, tzinfo=UTC)
MOVE = {"position": "rbsgk/4p/5/P4/KGSBR[-] w 0 1", "moves": "", "level": 3, "clock": None}
ANALYSIS = {"position": "rbsgk/4p/5/P4/KGSBR[-] w 0 1", "moves": "a2a3", "limits": {"depth": 4}}


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def test_a_queued_job_is_leased_with_its_payload(store: Store) -> None:
    job_id = await store.enqueue_move("g1", "minishogi", MOVE, now=at(0))
    job = await store.acquire("w1", at(1))
    assert job is not None
    assert (job.id, job.kind, job.game_id, job.variant) == (job_id, "move", "g1", "minishogi")
    assert job.payload == MOVE
    assert (job.state, job.worker, job.attempts) == ("acquired", "w1", 1)
    assert job.lease_until == at(21)  # the move lease: 20 s
    assert job.leased(at(20.9)) and not job.leased(at(21))
    assert await store.acquire("w2", at(2)) is None  # held: nobody else gets it


async def test_an_empty_queue_gives_nothing(store: Store) -> None:
    assert await store.acquire("w1", at(0)) is None


async def test_move_jobs_go_before_older_analysis_jobs(store: Store) -> None:
    first_analysis = await store.enqueue_analysis("g1", "shoshogi", ANALYSIS, now=at(0))
    second_analysis = await store.enqueue_analysis("g2", "shoshogi", ANALYSIS, now=at(1))
    move = await store.enqueue_move("g3", "daishogi", MOVE, now=at(2))
    later_move = await store.enqueue_move("g4", "daishogi", MOVE, now=at(3))
    order = []
    for worker in ("a", "b", "c", "d"):
        job = await store.acquire(worker, at(4))
        assert job is not None
        order.append(job.id)
    assert order == [move, later_move, first_analysis, second_analysis]
    analysis = await store.job(first_analysis)
    assert analysis is not None and analysis.lease_until == at(64)  # the analysis lease: 60 s


async def test_an_expired_lease_goes_to_the_next_worker(store: Store) -> None:
    job_id = await store.enqueue_move("g1", "spartan", MOVE, now=at(0))
    assert (await store.acquire("dead", at(0))) is not None
    assert await store.acquire("w2", at(19.9)) is None
    again = await store.acquire("w2", at(20))
    assert again is not None and again.id == job_id
    assert (again.worker, again.attempts) == ("w2", 2)
    # the new holder's lease counts from its acquire; the dead worker's late answer is refused
    assert await store.complete(job_id, {"bestmove": "x"}, at(41)) is None
    done = await store.complete(job_id, {"bestmove": "e2e4"}, at(39))
    assert done is not None and done.state == "done" and done.result == {"bestmove": "e2e4"}


async def test_renew_extends_a_held_lease_only(store: Store) -> None:
    job_id = await store.enqueue_analysis("g1", "daishogi", ANALYSIS, now=at(0))
    assert await store.acquire("w1", at(0)) is not None
    partial = [{"ply": 0, "score": {"cp": 10}}]
    assert await store.renew(job_id, at(50), result=partial)
    job = await store.job(job_id)
    assert job is not None and job.lease_until == at(110) and job.result == partial
    assert await store.renew(job_id, at(100), lease_s=5)
    job = await store.job(job_id)
    assert job is not None and job.lease_until == at(105) and job.result == partial
    assert not await store.renew(job_id, at(105))  # ran out
    assert not await store.renew("unknown", at(0))
    assert not await store.renew("x" * 200, at(0))


async def test_complete_ends_a_job_once(store: Store) -> None:
    job_id = await store.enqueue_move("g1", "wildcastle", MOVE, now=at(0))
    assert await store.complete(job_id, {"bestmove": "e2e4"}, at(0)) is None  # not acquired
    assert await store.acquire("w1", at(1)) is not None
    done = await store.complete(job_id, {"bestmove": "e2e4"}, at(2))
    assert done is not None and done.state == "done" and done.lease_until is None
    assert await store.complete(job_id, {"bestmove": "d2d4"}, at(3)) is None
    assert not await store.abort(job_id, at(3))
    assert await store.acquire("w2", at(100)) is None  # done jobs are never handed out
    job = await store.job(job_id)
    assert job is not None and job.result == {"bestmove": "e2e4"}


async def test_abort_gives_the_job_back(store: Store) -> None:
    job_id = await store.enqueue_move("g1", "minishogi", MOVE, now=at(0))
    assert await store.acquire("w1", at(0)) is not None
    assert await store.abort(job_id, at(1))
    job = await store.job(job_id)
    assert job is not None and (job.state, job.worker, job.lease_until) == ("queued", None, None)
    again = await store.acquire("w2", at(2))
    assert again is not None and again.id == job_id and again.attempts == 2
    assert not await store.abort("unknown", at(2))


async def test_a_worker_gets_only_its_variants(store: Store) -> None:
    await store.enqueue_move("g1", "daishogi", MOVE, now=at(0))
    mini = await store.enqueue_move("g2", "minishogi", MOVE, now=at(1))
    job = await store.acquire("w1", at(2), variants=["minishogi", "spartan"])
    assert job is not None and job.id == mini
    assert await store.acquire("w1", at(2), variants=["spartan"]) is None
    assert await store.acquire("w1", at(2), variants=[]) is None


async def test_a_new_move_job_ends_the_games_older_ones(store: Store) -> None:
    old = await store.enqueue_move("g1", "minishogi", MOVE, now=at(0))
    assert await store.acquire("w1", at(0)) is not None
    other_game = await store.enqueue_move("g2", "minishogi", MOVE, now=at(1))
    analysis = await store.enqueue_analysis("g1", "minishogi", ANALYSIS, now=at(1.5))
    new = await store.enqueue_move("g1", "minishogi", MOVE, now=at(2))
    old_job = await store.job(old)
    assert old_job is not None and old_job.state == "done" and old_job.result is None
    assert await store.complete(old, {"bestmove": "a1a2"}, at(3)) is None  # its holder: 404
    assert [job.id for job in await store.open_jobs()] == [other_game, analysis, new]
    assert [job.id for job in await store.open_jobs("move")] == [other_game, new]


async def test_status_counts_waiting_and_held_jobs(store: Store) -> None:
    empty = {"move": {"queued": 0, "acquired": 0}, "analysis": {"queued": 0, "acquired": 0}}
    assert await store.status(at(0)) == empty
    first = await store.enqueue_move("g1", "minishogi", MOVE, now=at(0))
    await store.enqueue_move("g2", "minishogi", MOVE, now=at(0.1))
    await store.enqueue_analysis("g3", "minishogi", ANALYSIS, now=at(0.2))
    held = await store.acquire("w1", at(0.5))
    assert held is not None and held.id == first  # the oldest
    assert await store.status(at(1)) == {
        "move": {"queued": 1, "acquired": 1},
        "analysis": {"queued": 1, "acquired": 0},
    }
    # an expired lease counts as waiting
    assert (await store.status(at(25)))["move"] == {"queued": 2, "acquired": 0}
    assert await store.complete(first, {"bestmove": None}, at(2)) is not None
    assert (await store.status(at(2)))["move"] == {"queued": 1, "acquired": 0}


async def test_cancel_and_purge(store: Store) -> None:
    job_id = await store.enqueue_move("g1", "minishogi", MOVE, now=at(0))
    assert await store.acquire("w1", at(0)) is not None
    assert await store.cancel(job_id, at(1))
    assert not await store.cancel(job_id, at(1))
    assert await store.complete(job_id, {"bestmove": "a1a2"}, at(2)) is None
    assert await store.purge_done(at(1)) == 0
    assert await store.purge_done(at(1.5)) == 1
    assert await store.job(job_id) is None


async def test_bad_arguments_change_nothing(store: Store) -> None:
    with pytest.raises(ValueError):
        await store.enqueue_move("not a game id!", "minishogi", MOVE)
    with pytest.raises(ValueError):
        await store.enqueue_move("g1", "", MOVE)
    with pytest.raises(ValueError):
        await store.enqueue_analysis("g1", "minishogi", ["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        await store.acquire("", at(0))
    with pytest.raises(ValueError):
        await store.acquire("w1", datetime(2026, 1, 1))  # naive
    with pytest.raises(ValueError):
        await store.acquire("w1", at(0), leases={"move": -1, "analysis": 60})
    assert await store.open_jobs() == []


async def test_concurrent_acquires_never_share_a_job(
    store: Store, open_store: Callable[[], Store]
) -> None:
    """Several stores (separate pools, as several hubs) acquire at once: every job goes to
    exactly one worker (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: BEGIN IMMEDIATE)."""
    ids = {await store.enqueue_move(f"g{n}", "minishogi", MOVE, now=at(0)) for n in range(12)}
    hubs = [open_store() for _ in range(3)]

    async def drain(hub: Store, name: str) -> list[str]:
        got = []
        while (job := await hub.acquire(name, at(1))) is not None:
            got.append(job.id)
        return got

    results = await asyncio.gather(*(drain(hub, f"w{n}") for n, hub in enumerate(hubs)))
    taken = [job_id for got in results for job_id in got]
    assert sorted(taken) == sorted(ids)
    assert len(set(taken)) == len(taken)


async def test_jobs_survive_a_new_store(store: Store, open_store: Callable[[], Store]) -> None:
    """The queue is the database: another store (a restarted hub) sees the same jobs."""
    job_id = await store.enqueue_analysis("g1", "shoshogi", ANALYSIS, now=at(0))
    assert await store.acquire("w1", at(0)) is not None
    restarted = open_store()
    assert [job.id for job in await restarted.open_jobs()] == [job_id]
    again = await restarted.acquire("w2", at(60))
    assert again is not None and again.id == job_id and again.payload == ANALYSIS


async def test_move_jobs_go_round_robin_between_owners(store: Store) -> None:
    """One player's many level-8 games queue first; another player's level-1 job, queued later,
    is the second handed out (the owner served longest ago first), not the last."""
    hog = [
        await store.enqueue_move(f"h{i}", "daishogi", {**MOVE, "level": 8}, now=at(i), owner="u1")
        for i in range(4)
    ]
    honest = await store.enqueue_move("x1", "minishogi", {**MOVE, "level": 1}, now=at(10), owner="u2")
    anonymous = await store.enqueue_move("x2", "minishogi", MOVE, now=at(11))  # no owner
    order = []
    for second in range(6):
        job = await store.acquire(f"w{second}", at(20 + second))
        assert job is not None
        order.append(job.id)
        assert job.served_at == at(20 + second)
    # Nobody served yet: the oldest; then those never served (oldest first), then the hog.
    assert order == [hog[0], honest, anonymous, hog[1], hog[2], hog[3]]
    # The turn is remembered in the store: the honest player, served at 22, goes before the
    # hog, served at 25, whose jobs are older.
    again = await store.enqueue_move("h9", "daishogi", MOVE, now=at(30), owner="u1")
    next_honest = await store.enqueue_move("x3", "minishogi", MOVE, now=at(31), owner="u2")
    first = await store.acquire("w9", at(32))
    second_job = await store.acquire("w10", at(33))
    assert first is not None and second_job is not None
    assert (first.id, second_job.id) == (next_honest, again)
    assert first.owner == "u2"


async def test_waiting_moves_name_the_variants_nobody_holds(store: Store) -> None:
    assert await store.waiting_moves(at(0)) == []
    await store.enqueue_move("g1", "minishogi", MOVE, now=at(0))
    await store.enqueue_move("g2", "daishogi", MOVE, now=at(0))
    await store.enqueue_analysis("g3", "spartan", ANALYSIS, now=at(0))
    assert await store.waiting_moves(at(1)) == ["daishogi", "minishogi"]
    held = await store.acquire("w1", at(1), variants=["daishogi"])
    assert held is not None
    assert await store.waiting_moves(at(2)) == ["minishogi"]
    assert await store.waiting_moves(at(30)) == ["daishogi", "minishogi"]  # its lease ran out


async def test_a_new_analysis_job_of_a_game_ends_the_old_one(store: Store) -> None:
    old = await store.enqueue_analysis("g1", "minishogi", ANALYSIS, now=at(0), owner="carol")
    assert await store.acquire("w1", at(1)) is not None
    new = await store.enqueue_analysis("g1", "minishogi", ANALYSIS, now=at(2), owner="alice")
    assert not await store.renew(old, at(3))  # the stranger's worker is told to stop (404)
    job = await store.acquire("w2", at(3))
    assert job is not None and job.id == new and job.owner == "alice"

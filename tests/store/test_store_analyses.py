"""Stored analyses: requested, filled ply by ply, done or failed, read back after a restart."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from server.rules.analysis import AnalysisLimits, FirstPlayerScore, PlyEval
from server.store import (
    AnalysisExistsError,
    GameStateError,
    Store,
    UnknownAnalysisError,
    UnknownGameError,
)

MakeGame = Callable[..., Awaitable[str]]
LIMITS = AnalysisLimits(movetime_ms=200)


async def finished_game(store: Store, make_game: MakeGame) -> str:
    game_id = await make_game()
    await store.finish_game(game_id, "1-0", "resignation", plies=3, final_fen="x")
    return game_id


async def test_request_fill_and_finish(store: Store, make_game: MakeGame, open_store: Callable[[], Store]) -> None:
    game_id = await finished_game(store, make_game)
    assert await store.get_analysis(game_id) is None
    queued = await store.request_analysis(game_id, limits=LIMITS, plies_total=4, requested_by="alice")
    assert (queued.state, queued.plies_done, queued.plies_total) == ("queued", 0, 4)
    first = [
        PlyEval(0, FirstPlayerScore(20), "e1e2", ("e1e2", "a5a4"), 10, 1234, 190),
        PlyEval(1, FirstPlayerScore(mate=-3), None, (), 7, None, 200),
    ]
    running = await store.save_analysis_plies(game_id, first)
    assert running.state == "running" and running.evals == tuple(first)
    # A ply sent again replaces the earlier one; duplicates in one submission: the last wins.
    again = [PlyEval(1, FirstPlayerScore(-50), "b5b4", ("b5b4",), 8, 99, 210),
             PlyEval(2, FirstPlayerScore(30)), PlyEval(2, FirstPlayerScore(31))]
    await store.save_analysis_plies(game_id, again)
    last = [PlyEval(3, FirstPlayerScore(mate=1))]
    done = await store.save_analysis_plies(game_id, last, done=True)
    assert done.state == "done" and done.finished_at is not None
    assert [e.score for e in done.evals] == [
        FirstPlayerScore(20), FirstPlayerScore(-50), FirstPlayerScore(31), FirstPlayerScore(mate=1)
    ]
    # Survives a restart: another store (its own engine and pool) reads the same.
    other = open_store()
    assert await other.get_analysis(game_id) == done
    assert done.requested_by == "alice" and done.limits == LIMITS
    # A done analysis takes no more results and cannot be requested again.
    with pytest.raises(UnknownAnalysisError):
        await store.save_analysis_plies(game_id, [PlyEval(0, FirstPlayerScore(0))])
    with pytest.raises(AnalysisExistsError):
        await store.request_analysis(game_id, limits=LIMITS, plies_total=4)
    assert await store.get_analysis(game_id) == done


async def test_failed_analysis_can_be_requested_again(store: Store, make_game: MakeGame) -> None:
    game_id = await finished_game(store, make_game)
    await store.request_analysis(game_id, limits=AnalysisLimits(depth=8), plies_total=4)
    await store.save_analysis_plies(game_id, [PlyEval(0, FirstPlayerScore(5))])
    with pytest.raises(AnalysisExistsError):
        await store.request_analysis(game_id, limits=LIMITS, plies_total=4)
    assert await store.fail_analysis(game_id, "engine crashed")
    assert not await store.fail_analysis(game_id, "twice")
    failed = await store.get_analysis(game_id)
    assert failed is not None and failed.state == "failed" and failed.error == "engine crashed"
    assert failed.plies_done == 1
    again = await store.request_analysis(game_id, limits=LIMITS, plies_total=4, requested_by="bob")
    assert again.state == "queued"
    stored = await store.get_analysis(game_id)
    assert stored is not None and stored.evals == () and stored.limits == LIMITS
    assert stored.error is None and stored.requested_by == "bob"


async def test_refusals_change_nothing(store: Store, make_game: MakeGame) -> None:
    running = await make_game()
    with pytest.raises(GameStateError):
        await store.request_analysis(running, limits=LIMITS, plies_total=1)
    with pytest.raises(UnknownGameError):
        await store.request_analysis("nosuchgm", limits=LIMITS, plies_total=1)
    with pytest.raises(UnknownAnalysisError):
        await store.save_analysis_plies(running, [PlyEval(0, FirstPlayerScore(0))])
    game_id = await finished_game(store, make_game)
    for limits in (AnalysisLimits(), AnalysisLimits(movetime_ms=0), AnalysisLimits(depth=-1)):
        with pytest.raises(ValueError):
            await store.request_analysis(game_id, limits=limits, plies_total=1)
    with pytest.raises(ValueError):
        await store.request_analysis(game_id, limits=LIMITS, plies_total=1, requested_by="x" * 40)
    assert await store.get_analysis(running) is None
    assert await store.get_analysis(game_id) is None
    await store.request_analysis(game_id, limits=LIMITS, plies_total=2)
    with pytest.raises(ValueError):
        gap = [PlyEval(0, FirstPlayerScore(1)), PlyEval(3, FirstPlayerScore(0))]
        await store.save_analysis_plies(game_id, gap)
    stored = await store.get_analysis(game_id)
    assert stored is not None and stored.state == "queued" and stored.evals == ()

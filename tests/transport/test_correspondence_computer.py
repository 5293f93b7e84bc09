"""The computer in correspondence, with a REAL worker process and REAL engines: a
registered player challenges it at 1 day per move and it answers each move at its level's own
move time (a correspondence control gives the worker no clock: a day's budget would have let a
search run to the 30-s cap); the game is the player's correspondence game; once resigned it is
analysed like any other game."""

from __future__ import annotations

import asyncio
import json

import aiohttp
from computer_support import HumanGame
from test_analysis_e2e import Watch
from worker_support import StartWorker
from ws_support import Client, OpenClient, StartApp

from server.app import App
from server.app.computer import job_clock
from server.hub.payloads import ClocksView, TimeControlView
from server.worker.levels import LEVELS, think_limits

ONE_DAY = {"kind": "correspondence", "days": 1}
WAIT_S = 60.0  # an upper bound for a stuck pipeline; the tests end at the event


def test_a_correspondence_control_gives_the_move_job_no_clock() -> None:
    clocks: ClocksView = {
        "first": {"ms": 86_400_000},
        "second": {"ms": 3_600_000},
        "running": "second",
    }
    days: TimeControlView = {"kind": "correspondence", "days": 1}
    unlimited: TimeControlView = {"kind": "unlimited"}
    assert job_clock(days, clocks, "second") is None
    assert job_clock(unlimited, clocks, "second") is None
    fischer: TimeControlView = {"kind": "fischer", "base_s": 300, "inc_s": 2}
    real = job_clock(fischer, clocks, "second")
    assert real is not None and real["kind"] == "fischer" and real["increment_ms"] == 2000


async def corr_game_with_a_computer_move(
    app: App, human: Client
) -> HumanGame:
    """``human`` (registered) challenges level 1 at 1 day per move, plays the first move and
    waits for the computer's answer."""
    answer = await human.ok(
        "challenge_ai", {"variant": "minishogi", "level": 1, "colour": "first", "tc": ONE_DAY}
    )
    game = HumanGame(human, answer["game"])
    while game.turn is None:
        await game.next_event()
    assert game.side == "first" and game.turn == "first"
    await human.ok("move", {"game": game.game_id, "ply": 1, "move": sorted(game.legal)[0]})
    while game.computer_moves == 0 and game.end is None:
        await game.next_event()
    return game


async def test_the_computer_answers_a_correspondence_move_at_its_levels_time(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    app = await start_app(fishnet_poll_s=1)
    await start_worker(app)
    human = await open_client(app, "human")
    await human.register("carol")
    game = await corr_game_with_a_computer_move(app, human)
    assert game.end is None and game.computer_moves == 1 and len(game.moves) == 2
    # The job gave the worker no clock, so the search had level 1's own move time, not a
    # share of the day (Mini-Shogi's engine is Fairy-Stockfish).
    job = await app.store.latest_job(game.game_id, "move")
    assert job is not None and job.state == "done" and job.payload["level"] == 1
    assert job.payload["clock"] is None
    limits = think_limits("fairy-stockfish", 1, None)
    assert limits.movetime_ms == LEVELS["fairy-stockfish"][1].movetime_ms == 50
    # (Wall time is not asserted: on a loaded machine it measures the load; the limits the
    # worker derives from this job are what its search obeys, tests/worker/test_engines.py.)
    # The player's own list shows it as a correspondence game, their turn again.
    listed = await human.ok("my_games")
    (entry,) = [g for g in listed["games"] if g["game"] == game.game_id]
    assert entry["tc"] == ONE_DAY and entry["your_turn"] is True and entry["plies"] == 2
    player = human.hello["d"]["player"]["id"] if human.hello else ""
    assert game.game_id in app.hub.games_of(player)
    # The computer's game stays in memory (it is never left cold: it moves by itself).
    assert app.hub.room(game.game_id) is not None


async def test_a_finished_correspondence_game_is_analysed_like_any_other(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    app = await start_app(fishnet_poll_s=1)
    watch = Watch(app)
    await start_worker(app)
    human = await open_client(app, "human")
    await human.register("carol")
    game = await corr_game_with_a_computer_move(app, human)
    await human.ok("resign", {"game": game.game_id})
    while game.end is None:
        await game.next_event()
    assert game.end["termination"] == "resignation"
    watch.expect(game.game_id)
    headers = {"Authorization": f"Bearer {human.token}"}
    base = f"http://127.0.0.1:{app.port}/api/game/{game.game_id}/analysis"
    async with aiohttp.ClientSession(headers=headers) as http:
        async with http.post(base, json={"movetime_ms": 100}) as asked:
            body = await asked.text()
            assert asked.status == 202, body
        total = json.loads(body)["progress"]["total"]
        assert total == len(game.moves) + 1  # every position, the start's included
        await asyncio.wait_for(watch.done[game.game_id].wait(), WAIT_S)
        async with http.get(base) as got:
            view = await got.json()
    assert view["state"] == "done"
    assert view["progress"] == {"done": total, "total": total}
    assert [p["ply"] for p in view["plies"]] == list(range(total))

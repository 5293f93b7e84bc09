"""Computer analysis end to end with REAL worker processes and REAL engines (the Debian ones
``scripts/system-deps.sh`` installs): a stored game of each of the five variants analysed
(requested over HTTP, done by ``python -m server.worker``), read back over HTTP and in the PGN
with python-chess's own ``[%eval]`` reader; a worker SIGKILLed mid-analysis → another worker
finishes it. Waits are on events (the job queue's analysis handler), never on sleeps; every
process started is killed at the end."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import signal
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import chess
import chess.engine
import chess.pgn
import pytest
from test_review import random_moves, save_game
from ws_support import TEST_WORKER_KEY, StartApp, registered_headers

from server.app import App
from server.rules import Game, get_variant
from server.rules.notation import display_move
from server.store.jobs import Job

VARIANTS = ("minishogi", "shoshogi", "wildcastle", "spartan", "daishogi")
WAIT_S = 120  # an upper bound for a stuck pipeline; the test ends at the event


class Watch:
    """Every analysis submission the job queue handled, with events per game."""

    def __init__(self, app: App) -> None:
        self.done: dict[str, asyncio.Event] = {}
        self.progressed: dict[str, asyncio.Event] = {}
        self.workers: dict[str, list[str | None]] = {}
        app.jobs.on_analysis(self._seen)  # after the desk's handler: the store has it already

    def expect(self, game_id: str) -> None:
        self.done[game_id] = asyncio.Event()
        self.progressed[game_id] = asyncio.Event()
        self.workers[game_id] = []

    async def _seen(self, job: Job, entries: list[dict[str, Any]], done: bool) -> None:
        self.workers[job.game_id].append(job.worker)
        self.progressed[job.game_id].set()
        if done:
            self.done[job.game_id].set()


async def worker_process(app: App, name: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.worker", "--url", f"http://127.0.0.1:{app.port}",
        "--key", TEST_WORKER_KEY, "--slots", "1", "--nice", "0", "--name", name,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )


@contextlib.asynccontextmanager
async def workers(app: App, *names: str) -> AsyncIterator[list[asyncio.subprocess.Process]]:
    procs = [await worker_process(app, name) for name in names]
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
            await proc.wait()


async def call(app: App, method: str, path: str, **kwargs: Any) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.request(
        method, f"http://127.0.0.1:{app.port}{path}", **kwargs
    ) as answer:
        return answer.status, await answer.text()


def pgn_evals(pgn: str, variant: str) -> list[chess.engine.PovScore | None]:
    """python-chess's reading of each move's ``[%eval]`` (its own board for Wild Castle; for the
    others, which it has no board for, its comment reader on null moves)."""
    if variant == "wildcastle":
        text = "\n".join(line for line in pgn.splitlines() if not line.startswith("[Variant "))
        read = chess.pgn.read_game(io.StringIO(text))
        assert read is not None and not read.errors
        return [node.eval() for node in read.mainline()]
    game = chess.pgn.Game()
    node: chess.pgn.GameNode = game
    movetext = pgn.split("\n\n")[1]
    comments: list[str] = []
    for comment, token in re.findall(r"\{([^}]*)\}|(\S+)", movetext):
        if comment and comments:
            comments[-1] += " " + comment
        elif token and not re.fullmatch(r"\d+\.(\.\.)?|1-0|0-1|1/2-1/2|\*", token):
            comments.append("")
    for comment in comments:
        node = node.add_variation(chess.Move.null(), comment=comment)
    return [n.eval() for n in game.mainline()]


def expected_pov(score: dict[str, int]) -> chess.engine.PovScore:
    if "mate" in score:
        return chess.engine.PovScore(chess.engine.Mate(score["mate"]), chess.WHITE)
    return chess.engine.PovScore(chess.engine.Cp(score["cp"]), chess.WHITE)


def short_game(variant: str, seed: int, plies: int) -> list[str]:
    """Random moves, without a d-file king's castling (python-chess reads it as Chess960)."""
    moves = random_moves(variant, seed, plies)
    if variant != "wildcastle":
        return moves
    game = Game(get_variant(variant))
    kept = []
    for uci in moves:
        pos = game.position
        if pos.move_from_uci(uci).from_sq in pos.royals[pos.turn]:
            break
        game.play(uci)
        kept.append(uci)
    return kept


@pytest.mark.parametrize("variant", VARIANTS)
async def test_a_stored_game_is_analysed_by_a_real_worker(start_app: StartApp, variant: str) -> None:
    app = await start_app("postgresql", fishnet_poll_s=1)
    watch = Watch(app)
    game_id, game = await save_game(app.store, variant=variant, moves=short_game(variant, 7, 6))
    watch.expect(game_id)
    limits = {"movetime_ms": 200} if variant == "daishogi" else {"movetime_ms": 100}
    carol = await registered_headers(app, "carol")
    status, body = await call(app, "POST", f"/api/game/{game_id}/analysis", json=limits, headers=carol)
    assert status == 202, body
    total = json.loads(body)["progress"]["total"]
    async with workers(app, "w1"):
        await asyncio.wait_for(watch.done[game_id].wait(), WAIT_S)
    status, body = await call(app, "GET", f"/api/game/{game_id}/analysis")
    view = json.loads(body)
    assert status == 200 and view["state"] == "done"
    assert view["progress"] == {"done": total, "total": total}
    assert [p["ply"] for p in view["plies"]] == list(range(total))
    for entry in view["plies"]:
        position = game.position_at(entry["ply"])
        if entry["best"] is not None:  # the engine's best move is legal by our rules
            assert entry["best"] in {position.uci(m) for m in position.legal_moves()}
            # ... and shown as the move list writes moves, its line too.
            assert entry["best_display"] == display_move(position, position.move_from_uci(entry["best"]))
            assert entry["pv_display"][:1] == [entry["best_display"]]
        assert set(entry["score"]) <= {"cp", "mate"} and entry["depth"] >= 0
    best = {p["ply"]: p["best"] for p in view["plies"]}
    for advice in view["advice"]:  # the engine's own best move is never judged
        assert game.moves[advice["ply"] - 1] != best[advice["ply"] - 1]
    status, pgn = await call(app, "GET", f"/api/games/{game_id}.pgn")
    assert status == 200
    by_ply = {p["ply"]: p["score"] for p in view["plies"]}
    read = pgn_evals(pgn, variant)
    assert len(read) == game.ply
    for ply, score in enumerate(read, 1):
        assert score == (expected_pov(by_ply[ply]) if ply in by_ply else None), (ply, pgn)


async def test_a_worker_killed_mid_analysis_another_finishes(start_app: StartApp) -> None:
    app = await start_app("postgresql", fishnet_poll_s=1, analysis_lease_s=2.0)
    watch = Watch(app)
    game_id, _ = await save_game(app.store, moves=short_game("minishogi", 3, 24))
    watch.expect(game_id)
    carol = await registered_headers(app, "carol")
    status, body = await call(
        app, "POST", f"/api/game/{game_id}/analysis", json={"movetime_ms": 150}, headers=carol
    )
    assert status == 202
    total = json.loads(body)["progress"]["total"]
    async with workers(app, "first") as (first,):
        await asyncio.wait_for(watch.progressed[game_id].wait(), WAIT_S)
        first.send_signal(signal.SIGKILL)
        await first.wait()
    stored = await app.store.get_analysis(game_id)
    assert stored is not None and stored.state == "running" and 0 < stored.plies_done < total
    async with workers(app, "second"):
        await asyncio.wait_for(watch.done[game_id].wait(), WAIT_S)
    assert watch.workers[game_id][0] == "first" and watch.workers[game_id][-1] == "second"
    done = await app.store.get_analysis(game_id)
    assert done is not None and done.state == "done"
    assert [e.ply for e in done.evals] == list(range(total))

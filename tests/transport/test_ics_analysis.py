"""The ICS door's computer analysis: ``analyze`` requests it, ``analysis`` shows it, with the
REAL engine worker (``python -m server.worker``) doing the work (docs/ics.md, docs/engines.md)."""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from computer_support import TURN_TIMEOUT_S, WorkerProcess
from ics_support import IcsClient, OpenIcs, board_fields
from support import wait_until
from ws_support import StartApp

from server.rules.analysis import JUDGEMENT_GLYPHS, advices, summarize


@pytest.fixture
async def worker_log(tmp_path: Path) -> AsyncIterator[list[WorkerProcess]]:
    workers: list[WorkerProcess] = []
    yield workers
    for worker in workers:
        await worker.stop()


async def test_analyze_and_analysis_over_ics_with_the_real_worker(
    start_app: StartApp, ics_guest: OpenIcs, worker_log: list[WorkerProcess], tmp_path: Path
) -> None:
    app = await start_app(ics=True)
    worker_log.append(await WorkerProcess.start(app.port, tmp_path / "w.log", "w1"))
    human = await ics_guest(app)
    await human.send("computer 1 5 0 white minishogi")
    start = await human.expect(r"^\{Game (\d+) \((\S+) vs\. Computer\) Creating")
    number = int(start.group(1))
    (game_id,) = list(app.computer.games)
    board = (await human.expect(r"^<12> ")).string  # the start: the human's move

    # Refusals first: a guest may not request (the computer's time is for registered players),
    # a running game is not analysed, and has no analysis to show.
    await human.send(f"analyze #{game_id}")
    await human.expect(r"^guests cannot request computer analyses; log in with a registered account$")
    dana = await IcsClient.registered(app, "dana")
    await dana.send(f"analyze #{game_id}")
    await dana.expect(rf"^Game {number} is not over yet: only finished games can be analysed\.$")
    await human.send(f"analysis #{game_id}")
    await human.expect(
        rf'^Game {number} has no analysis yet: type "analyze #{game_id}" to request one\.$'
    )
    await dana.send("analyze #Zz9Zz9Zz")
    await dana.expect(r"^There is no such game\.$")
    await human.send("analyze")
    await human.expect(r"^Usage: analyze <name> <history index> \| analyze <game id>$")

    # Four plies (two of the computer's), then the human resigns.
    rng = random.Random(5)
    computer_moves = 0
    while computer_moves < 2:
        fields = board_fields(board.split(), 5)
        room = app.hub.room(game_id)
        assert room is not None
        if fields["relation"] == "1" and room.game.ply >= 1:
            computer_moves += 1
        if fields["relation"] == "1" and computer_moves < 2:
            await human.send(rng.choice(sorted(room.game.legal_moves())))
        if computer_moves < 2:
            board = (await human.expect(r"^<12> ", TURN_TIMEOUT_S)).string
    await human.send("resign")
    await human.expect(r"resigns\} 0-1$")
    await wait_until(lambda: app.driver.pending_writes == 0)
    stored = await app.store.get_game(game_id)
    assert stored is not None and len(stored.moves) == 4

    assert await app.store.get_analysis(game_id) is None
    # A registered player requests it by its history index, as FICS players name stored games.
    try:
        await dana.send(f"analyze {human.name} 0")
        await dana.expect(
            r"^Analysis of game \d+ requested: 5 positions at 300 ms a position, about \d+ s\.$"
        )
        await dana.send(f"analyze #{game_id}")
        await dana.expect(rf'^Game \d+ already has an analysis: type "analysis #{game_id}"\.$')
    finally:
        await dana.close()
    while True:  # each look is a query: no sleeping
        analysis = await app.store.get_analysis(game_id)
        assert analysis is not None and analysis.state != "failed", analysis
        if analysis.state == "done":
            break

    await human.send(f"analysis #{game_id}")
    head = await human.expect(rf"^Analysis of game {number} \(")
    assert head.string.endswith(": done, 5 of 5 positions at 300 ms a position."), head.string
    played = [m.uci for m in stored.moves]
    first, second = summarize(analysis.evals, 0, played)
    for name, side in ((human.name, first), ("Computer", second)):
        line = (await human.expect(rf"^{re.escape(name)}: ")).string
        assert f"{side.blunders} blunder" in line and f"accuracy {side.accuracy}%" in line, line
    await human.expect(r"^Move +Eval +Engine's best before the move$")
    evals = {entry.ply: entry for entry in analysis.evals}
    marks = {advice.ply: advice for advice in advices(analysis.evals, 0, played)}
    start_line = await human.expect(r"^start ")
    assert start_line.string.split()[1] == text_of(evals[0].score.as_json())
    for ply, move in enumerate(stored.moves, start=1):
        words = (await human.expect(rf"^ +{(ply + 1) // 2}\.+ {re.escape(move.uci)} ")).string
        cells = words.split()
        assert cells[2] == text_of(evals[ply].score.as_json()) and cells[3] == evals[ply - 1].best
        if ply in marks:
            assert cells[4] == JUDGEMENT_GLYPHS[marks[ply].judgement], words
        else:
            assert len(cells) == 4, words


def text_of(score: dict[str, int]) -> str:
    return f"#{score['mate']}" if "mate" in score else f"{score['cp'] / 100:+.2f}"

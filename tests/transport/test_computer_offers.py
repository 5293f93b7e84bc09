"""The computer answers offers at once, as lichess's AI does (docs/engines.md): takebacks
accepted (and the move job of the position taken back never played), draws declined, rematches
accepted at the same level. The human is a websocket client; the worker is a client of the
HTTP door that the test drives (which job, which answer, when), so every race is the test's
choice."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from computer_support import TURN_TIMEOUT_S, HumanGame
from ws_support import TEST_WORKER_KEY, Client, Msg, OpenClient, StartApp

from server.rules import Game, get_variant


class DrivenWorker:
    """A worker the test drives over ``/fishnet``: acquire a job, submit its move."""

    def __init__(self, http: aiohttp.ClientSession, port: int) -> None:
        self.http = http
        self.base = f"http://127.0.0.1:{port}/fishnet"

    async def acquire(self) -> dict[str, Any]:
        """The next job (long polls until there is one)."""
        while True:
            async with self.http.post(
                f"{self.base}/acquire", json={"worker": {"name": "driven"}}
            ) as got:
                if got.status == 202:
                    job: dict[str, Any] = await got.json()
                    return job
                assert got.status == 204, got.status

    async def submit(self, job: dict[str, Any], move: str) -> int:
        async with self.http.post(
            f"{self.base}/move/{job['work']['id']}", json={"move": {"bestmove": move}}
        ) as done:
            return done.status


@pytest.fixture
async def worker_http() -> AsyncIterator[aiohttp.ClientSession]:
    headers = {"Authorization": f"Bearer {TEST_WORKER_KEY}"}
    async with aiohttp.ClientSession(headers=headers) as http:
        yield http


async def start(human: Client, variant: str, colour: str) -> HumanGame:
    answer = await human.ok(
        "challenge_ai",
        {
            "variant": variant,
            "level": 3,
            "colour": colour,
            "tc": {"kind": "fischer", "base_s": 300, "inc_s": 0},
        },
    )
    game = HumanGame(human, answer["game"])
    while game.turn is None:
        await game.next_event()
    return game


async def human_moves(game: HumanGame, move: str) -> None:
    ply = len(game.moves) + 1
    await game.client.ok("move", {"game": game.game_id, "ply": ply, "move": move})
    while len(game.moves) < ply:
        await game.next_event()


async def computer_moves(game: HumanGame) -> str:
    ply = len(game.moves) + 1
    while len(game.moves) < ply:
        await game.next_event()
    return game.moves[-1]


async def takeback(game: HumanGame) -> Msg:
    """Offer a takeback; the computer accepts at once: its ``offer`` accept, then the room's
    ``takeback`` (the human's view follows it)."""
    await game.client.ok("takeback_offer", {"game": game.game_id})
    accepted = await game.client.next(
        lambda m: (
            m["t"] == "offer" and m["d"]["kind"] == "takeback" and m["d"]["action"] != "offer"
        ),
        timeout=TURN_TIMEOUT_S,
    )
    assert accepted["d"]["action"] == "accept" and accepted["d"]["side"] != game.side
    taken = await game.client.next("takeback", timeout=TURN_TIMEOUT_S)
    data = taken["d"]
    game.moves = game.moves[: data["ply"]]
    game.legal, game.turn = list(data["legal"]), data["turn"]
    return data


def legal_after(move: str) -> list[str]:
    """Mini-Shogi's legal moves after ``move`` from the start."""
    game = Game(get_variant("minishogi"))
    game.play(move)
    return game.legal_moves()


async def test_takebacks_are_accepted_and_a_stale_job_is_never_played(
    start_app: StartApp, open_client: OpenClient, worker_http: aiohttp.ClientSession
) -> None:
    app = await start_app(fishnet_poll_s=1)
    worker = DrivenWorker(worker_http, app.port)
    human = await open_client(app, "human")
    await human.guest()
    game = await start(human, "minishogi", "first")

    # 1. A takeback on the human's turn: the human's move and the computer's reply go.
    first = sorted(game.legal)[0]
    await human_moves(game, first)
    job = await worker.acquire()
    assert job["moves"] == first
    reply = sorted(legal_after(first))[0]
    assert await worker.submit(job, reply) == 204
    assert await computer_moves(game) == reply
    data = await takeback(game)
    assert data["ply"] == 0 and data["removed"] == 2 and game.turn == game.side

    # 2. A takeback while a worker holds the computer's move job: the human's move goes,
    # the job is dropped, and its answer is never played, even once the human has played
    # another move in which that answer is legal.
    await human_moves(game, first)
    stale = await worker.acquire()
    assert stale["moves"] == first
    data = await takeback(game)
    assert data["ply"] == 0 and data["removed"] == 1 and game.turn == game.side
    other, stale_move = next(
        (move, answer)
        for move in sorted(game.legal)
        if move != first
        for answer in sorted(legal_after(first))
        if answer in legal_after(move)
    )
    await human_moves(game, other)
    # the stale job was cancelled (404), or its answer is stored and finds no game asking
    assert await worker.submit(stale, stale_move) in (204, 404)
    fresh = await worker.acquire()
    assert fresh["work"]["id"] != stale["work"]["id"] and fresh["moves"] == other
    answer = next(m for m in sorted(legal_after(other)) if m != stale_move)
    assert await worker.submit(fresh, answer) == 204
    # the sentinel: the computer's next move is the fresh job's, at the next ply
    assert await computer_moves(game) == answer and game.moves == [other, answer]
    stored = await app.store.job(stale["work"]["id"])
    assert stored is not None and stored.state == "done"
    assert app.computer.answered[("takeback", "accept")] == 2
    assert sum(app.computer.fallbacks.values()) == 0


async def test_draws_are_declined_and_rematches_accepted(
    start_app: StartApp, open_client: OpenClient, worker_http: aiohttp.ClientSession
) -> None:
    app = await start_app(fishnet_poll_s=1)
    worker = DrivenWorker(worker_http, app.port)
    human = await open_client(app, "human")
    await human.guest()
    game = await start(human, "wildcastle", "first")

    async def declined() -> None:
        await human.ok("draw_offer", {"game": game.game_id})
        answer = await human.next(
            lambda m: m["t"] == "offer" and m["d"]["kind"] == "draw" and m["d"]["side"] == "second",
            timeout=TURN_TIMEOUT_S,
        )
        assert answer["d"]["action"] == "decline"

    await declined()  # on the human's turn
    await human_moves(game, "e2e4")
    job = await worker.acquire()
    await declined()  # while the computer thinks
    assert await worker.submit(job, "e7e5") == 204
    assert await computer_moves(game) == "e7e5"
    assert game.end is None and app.computer.answered[("draw", "decline")] == 2

    await human.ok("resign", {"game": game.game_id})
    while game.end is None:
        await game.next_event()
    await human.ok("rematch_offer", {"game": game.game_id})
    rematch = await human.next("rematch", timeout=TURN_TIMEOUT_S)
    new_game = rematch["d"]["new_game"]
    start_msg = await human.next(
        lambda m: m["t"] == "game_start" and m["d"]["game"] == new_game, timeout=TURN_TIMEOUT_S
    )
    assert start_msg["d"]["opponent"]["computer"] is True
    # colours swapped: the computer moves first, at the old game's level
    job = await worker.acquire()
    assert job["game_id"] == new_game and job["level"] == 3 and job["moves"] == ""
    assert app.computer.answered[("rematch", "accept")] == 1

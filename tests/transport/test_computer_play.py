"""Games vs the computer with the REAL engines and REAL worker processes against a live server:
a whole game in each variant over the websocket ending by the rules, a worker killed mid-game
(another finishes it), and an engine move our rules forbid (never played: the fallback is)."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

import aiohttp
import pytest
from bot_support import call, make_bot
from computer_support import (
    TURN_TIMEOUT_S,
    HumanGame,
    challenge_the_computer,
    play_the_computer,
)
from ics_support import OpenIcs, board_fields
from support import wait_until
from worker_support import StartWorker
from ws_support import TEST_WORKER_KEY, Client, OpenClient, StartApp, settings_for

from server.app import App
from server.app.computer import fallback_move
from server.hub.room_state import RoomSettings
from server.rules import get_variant
from server.rules.export import replay
from server.rules.uci import legal_uci

RULE_ENDINGS = {
    "checkmate",
    "stalemate",
    "royal_capture",
    "repetition",
    "perpetual_check",
    "fifty_moves",
    "seventy_five_moves",
    "dead_position",
}


@pytest.mark.parametrize(
    ("variant", "colour", "resign_after"),
    [
        ("minishogi", "first", None),
        ("shoshogi", "second", None),
        ("wildcastle", "first", None),
        ("spartan", "second", None),
        # Dai Shogi's 15x15 board: a random mover survives hundreds of plies; it resigns at 40
        ("daishogi", "first", 40),
    ],
)
async def test_a_whole_game_vs_the_computer(
    start_app: StartApp,
    open_client: OpenClient,
    start_worker: StartWorker,
    variant: str,
    colour: str,
    resign_after: int | None,
) -> None:
    # The test's human answers each computer move at once, and a level-1 computer answers in
    # milliseconds: over a long game that is more than the 10 frames/s a websocket may send.
    # The rate limit is not what this test is about.
    app = await start_app(rate_limit_per_s=200.0, rate_limit_burst=200)
    await start_worker(app)
    human = await open_client(app, "human")
    await human.guest()
    game = await play_the_computer(human, variant, colour=colour, seed=7, resign_after=resign_after)
    assert game.end is not None
    if resign_after is None:
        assert game.end["termination"] in RULE_ENDINGS, game.end
    else:
        assert game.end["termination"] == "resignation" and game.end["winner"] != colour
    assert game.computer_moves >= 2
    assert sum(app.computer.played.values()) == game.computer_moves
    stored = await app.store.get_game(game.game_id)
    assert stored is not None and [m.uci for m in stored.moves] == game.moves
    assert "Computer" in (stored.first_name, stored.second_name)


async def test_a_killed_worker_leaves_its_move_to_another(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    """The only worker is SIGKILLed (engines and all) while it searches the computer's move:
    the job's lease (short here) runs out, a second worker takes it and the game goes on to its
    end (the human resigns after a few more moves)."""
    app = await start_app(move_lease_s=6, fishnet_poll_s=1)
    doomed = await start_worker(app, "doomed")
    human = await open_client(app, "human")
    await human.guest()
    # level 8 thinks on the clock: ~remaining/30 = 2 s a move here, long enough to be caught
    game = await challenge_the_computer(human, "minishogi", 8, "first", 60, 0)
    while game.turn is None:
        await game.next_event()
    await human.ok("move", {"game": game.game_id, "ply": 1, "move": sorted(game.legal)[0]})
    await game.next_event()  # our move's room event

    async def held_by_doomed() -> bool:
        jobs = await app.store.open_jobs("move")
        return any(job.worker == "doomed" and job.state == "acquired" for job in jobs)

    while not await held_by_doomed():  # each look is a query: no sleeping
        pass
    (held,) = [job.id for job in await app.store.open_jobs("move")]
    doomed.kill()
    await doomed.process.wait()
    await start_worker(app, "rescuer")
    await game.next_event()  # the computer's move, by the rescuer after the lease ran out
    assert game.computer_moves == 1
    job = await app.store.job(held)
    assert job is not None and job.state == "done" and job.attempts >= 2
    assert job.worker == "rescuer"
    while len(game.moves) < 6 and game.end is None:
        if game.legal and game.turn == game.side:
            ply = len(game.moves) + 1
            await human.ok(
                "move", {"game": game.game_id, "ply": ply, "move": sorted(game.legal)[0]}
            )
        await game.next_event()
    if game.legal:  # the game goes on: resign (its end by the rules may also have come)
        await human.ok("resign", {"game": game.game_id})
    while game.end is None:
        await game.next_event()
    assert game.end["termination"] in RULE_ENDINGS | {"resignation"}
    assert game.computer_moves == 3


async def test_level_8_moving_first_on_a_long_clock_moves_inside_the_first_move_window(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    """Before e7b7de0, level 8 moving first on 15 + 10 thought up to 30 s (the clock's budget) and
    its game was aborted at 30 s, every time. Its first move now searches at most 5 s
    (``FIRST_MOVE_MS``), well inside a player's 30-s window (the computer's own window is
    longer still). Dai Shogi, the slowest variant's first move (HaChu heeds "?" only between
    iterations); the other variants and clocks are measured by ``bench/bench_engines.py movetime
    VARIANT --clocks ...``."""
    app = await start_app()
    await start_worker(app)
    human = await open_client(app, "human")
    await human.guest()
    began = asyncio.get_running_loop().time()
    game = await challenge_the_computer(human, "daishogi", 8, "second", 900, 10)
    while game.computer_moves == 0 and game.end is None:
        await game.next_event()
    took = asyncio.get_running_loop().time() - began
    assert game.end is None and game.computer_moves == 1
    window_s = RoomSettings().first_move_window_ms / 1000
    assert took < window_s / 2, took  # the worker's and HaChu's start included
    job = await app.store.latest_job(game.game_id, "move")
    assert job is not None and job.payload["level"] == 8 and job.state == "done"


async def test_an_engine_move_our_rules_forbid_is_never_played(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """A worker (here a client of the HTTP door) submits a move our rules forbid, then none:
    both times the fallback is played instead, and counted."""
    app = await start_app(fishnet_poll_s=5)
    human = await open_client(app, "human")
    await human.guest()
    answer = await human.ok(
        "challenge_ai",
        {
            "variant": "spartan",
            "level": 3,
            "colour": "second",
            "tc": {"kind": "fischer", "base_s": 300, "inc_s": 0},
        },
    )
    game = HumanGame(human, answer["game"])
    headers = {"Authorization": f"Bearer {TEST_WORKER_KEY}"}
    base = f"http://127.0.0.1:{app.port}/fishnet"
    async with aiohttp.ClientSession(headers=headers) as http:
        for bad in ("e2e5", None):
            async with http.post(f"{base}/acquire", json={"worker": {"name": "liar"}}) as got:
                assert got.status == 202
                job = await got.json()
            assert job["work"]["type"] == "move" and job["variant"] == "spartan"
            while game.turn is None:
                await game.next_event()
            legal_before = list(game.legal)
            assert bad not in legal_before
            async with http.post(
                f"{base}/move/{job['work']['id']}", json={"move": {"bestmove": bad}}
            ) as done:
                assert done.status == 204
            before = len(game.moves)
            while len(game.moves) == before:
                await game.next_event()
            assert game.moves[-1] == fallback_move(legal_before)
            while game.turn != game.side:
                await game.next_event()
            ply = len(game.moves) + 1
            await human.ok(
                "move", {"game": game.game_id, "ply": ply, "move": sorted(game.legal)[-1]}
            )
            await game.next_event()
    assert app.computer.fallbacks[("spartan", "illegal_move")] == 1
    assert app.computer.fallbacks[("spartan", "no_move")] == 1


async def test_challenge_ai_refusals(start_app: StartApp, open_client: OpenClient) -> None:
    app = await start_app()
    human = await open_client(app, "human")
    await human.guest()
    tc = {"kind": "byoyomi", "main_s": 60, "period_s": 10, "periods": 1}
    refused = await human.request("challenge_ai", {"variant": "spartan", "level": 1, "tc": tc})
    assert refused["t"] == "error" and refused["d"]["code"] == "byoyomi_unavailable"
    refused = await human.request("challenge_ai", {"variant": "xiangqi", "level": 1, "tc": tc})
    assert refused["t"] == "error" and refused["d"]["code"] == "unknown_variant"
    refused = await human.request("challenge_ai", {"variant": "minishogi", "level": 9, "tc": tc})
    assert refused["t"] == "error" and refused["d"]["code"] == "bad_request"
    answer = await human.ok("challenge_ai", {"variant": "minishogi", "level": 1, "tc": tc})
    refused = await human.request("challenge_ai", {"variant": "minishogi", "level": 1, "tc": tc})
    assert refused["t"] == "error" and refused["d"]["code"] == "already_playing"
    # the game is queued as a move job when the computer has the first move, or waits for ours
    await asyncio.wait_for(human.next("game_start"), TURN_TIMEOUT_S)
    assert answer["game"]


async def test_a_whole_game_vs_the_computer_over_ics(
    start_app: StartApp, ics_guest: OpenIcs, start_worker: StartWorker
) -> None:
    """A telnet guest types ``computer 1 5 0 white minishogi`` and plays random legal moves
    (the room's own legal list, read from the server) until the game ends by the rules."""
    # The human answers each computer move at once and a level-1 computer answers in
    # milliseconds: more lines a second than a telnet user may type (the rate limit is not
    # what this test is about), as in the websocket version above.
    app = await start_app(ics=True, rate_limit_per_s=200.0, rate_limit_burst=200)
    await start_worker(app)
    human = await ics_guest(app)
    await human.send("who")
    await human.expect(r"^ Computer\(C\)$")
    await human.send("computer 1 5 0 white minishogi")
    await human.expect(r"^The computer \(level 1\) accepts\.$")
    start = await human.expect(r"^\{Game (\d+) \((\S+) vs\. Computer\) Creating (.+) match\.\}$")
    assert start.group(2) == human.name
    (game_id,) = list(app.computer.games)
    rng = random.Random(3)
    while True:
        line = (await human.expect(r"^(<12> |\{Game )", TURN_TIMEOUT_S)).string
        if line.startswith("{Game"):
            assert re.search(r"\} (1-0|0-1|1/2-1/2)$", line), line
            break
        fields = board_fields(line.split(), 5)
        room = app.hub.room(game_id)
        assert room is not None
        if fields["relation"] == "1" and room.game.legal_moves():
            await human.send(rng.choice(sorted(room.game.legal_moves())))
    await wait_until(lambda: app.driver.pending_writes == 0)  # the end is written after it is shown
    stored = await app.store.get_game(game_id)
    assert stored is not None and stored.termination in RULE_ENDINGS, stored
    assert stored.second_name == "Computer" and sum(app.computer.played.values()) >= 2


async def test_a_game_vs_the_computer_survives_a_hub_restart(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker, tmp_path: Path
) -> None:
    """The hub stops while the computer's move job waits (no worker yet): the job is in the
    database, the restarted hub's seat gets the restored game (level from its job) and the
    worker started then plays the move."""
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'restart.sqlite3'}"
    first = App(settings_for(database_url, journal_dir=str(tmp_path / "journal")))
    await first.start()
    try:
        alice = await Client.open(first.url, "alice")
        await alice.register("alice")
        answer = await alice.ok(
            "challenge_ai",
            {
                "variant": "spartan",
                "level": 5,
                "colour": "first",
                "tc": {"kind": "fischer", "base_s": 600, "inc_s": 0},
            },
        )
        game = HumanGame(alice, answer["game"])
        while game.turn is None:
            await game.next_event()
        await alice.ok("move", {"game": game.game_id, "ply": 1, "move": sorted(game.legal)[0]})
        await wait_until(
            lambda: (
                game.game_id in first.computer.games
                and first.computer.games[game.game_id].job_id is not None
            )
        )
        job_id = first.computer.games[game.game_id].job_id
        token = alice.token
        await alice.close()
    finally:
        await first.stop()
    app = await start_app(database_url=database_url)
    alice = await open_client(app, "alice")
    assert token is not None
    await alice.resume(token)
    await alice.ok("join", {"game": game.game_id})
    resumed = HumanGame(alice, game.game_id)
    await resumed.next_event()  # the snapshot
    assert len(resumed.moves) == 1 and resumed.turn != resumed.side
    await start_worker(app)
    await resumed.next_event()
    assert len(resumed.moves) == 2 and resumed.computer_moves == 1
    # the restarted seat queued its own job, at the level of the first one
    jobs = [job for job in await app.store.open_jobs() if job.game_id == game.game_id]
    assert jobs == []
    latest = await app.store.latest_job(game.game_id, "move")
    assert latest is not None and latest.payload["level"] == 5 and latest.state == "done"
    old = await app.store.job(job_id or "")
    assert old is not None and old.state == "done"


async def test_a_lichess_client_plays_the_computer_through_challenge_ai(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    """berserk's ``challenges.create_ai`` (lichess's ``POST /api/challenge/ai``): the game
    starts at once, the client plays it through the Bot API's streams and the computer's
    moves come from a real worker, to an ending by the rules."""
    app = await start_app(rate_limit_per_s=200.0, rate_limit_burst=200)
    await start_worker(app)
    bot = await make_bot(app, open_client, "robo")
    events = await bot.events()
    created = await call(
        bot.client.challenges.create_ai,
        level=1,
        clock_limit=120,
        clock_increment=1,
        color="white",
        variant="minishogi",
    )
    game_id = created["id"]
    assert created["source"] == "ai" and created["rated"] is False
    assert created["variant"]["key"] == "minishogi"
    assert created["clock"] == {"initial": 120_000, "increment": 1000}
    start = await events.next("gameStart")
    assert start["game"]["gameId"] == game_id and start["game"]["color"] == "white"
    stream = await bot.game(game_id)
    full = await stream.next("gameFull")
    assert full["white"]["name"] == "robo" and full["black"]["name"] == "Computer"
    rng = random.Random(5)
    variant = get_variant("minishogi")
    state = full["state"]
    while state["status"] == "started":
        moves = state["moves"].split()
        legal = legal_uci(replay(variant, None, moves).position)
        if len(moves) % 2 == 0 and legal:  # the client's turn (white: the first player)
            await call(bot.client.bots.make_move, game_id, rng.choice(legal))
        played = len(moves)
        state = await stream.next(
            lambda e, played=played: (
                e["type"] == "gameState"
                and (len(e["moves"].split()) > played or e["status"] != "started")
            )
        )
    assert state["status"] in ("mate", "stalemate", "draw", "resign", "outoftime"), state
    # Every move of the game, the computer's included, replays under our rules.
    replay(variant, None, state["moves"].split())


async def test_challenge_ai_refuses_bad_forms_and_changes_nothing(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    bot = await make_bot(app, open_client, "robo")
    for form in (
        {"level": "9", "variant": "minishogi"},
        {"level": "0", "variant": "minishogi"},
        {"level": "x", "variant": "minishogi"},
        {"level": "1", "variant": "minishogi", "color": "green"},
        {"level": "1", "variant": "minishogi", "days": "3"},
        {"level": "1", "variant": "minishogi", "fen": "8/8/8/8/8/8/8/8 w - - 0 1"},
        {"level": "1", "variant": "chess"},
    ):
        answer = await call(bot.post, "/api/challenge/ai", data=form)
        assert answer.status_code == 400, (form, answer.text)
        assert "error" in answer.json()
    playing = await call(bot.client.games.get_ongoing)
    assert playing == []

"""Property-based fuzzing of the live server (since dc98d00, 2026-11-25) with hypothesis.

Frames of every type, each invalid in one to three ways (``fuzz_frames.py``), go over real
websockets to a real server on port 0 — from both players of a running game, from an observer
with an open seek, and from a connection that has not logged in — between the moves of real
games. After **each** frame: the answer is the very next message and is a well-formed ``error``
(``bad_request`` / ``bad_json`` / ``bad_frame``) carrying the frame's ack id when it had a valid
one; the socket is open; the game (version, ply, position, status, offers, chat, members), the
seeks and the sessions are unchanged. Between batches the game goes on; each game is played to
its end and the stored moves are compared with those played. The same for HTTP: any path of
any endpoint with any parameters is answered 200, 400 or 404 (426 on the websocket path), the
review API's refusals with a JSON error, never 5xx. And well-formed frames with random values
(which may change things) never get ``internal_error``. Nothing is logged as an error.

Frames are drawn derandomized (the same on every run); the server is stateful, so a failure is
reported with the frame's text rather than shrunk. Sizes per backend (SQLite, PostgreSQL): in
CI 3,000 / 2,000 bad frames, 600 requests, 600 well-formed frames; with ``--long`` 120,000 bad
frames, 20,000 requests and 20,000 well-formed frames.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from fuzz_frames import (
    Frame,
    expected_ack,
    frames,
    refused_before_parsing,
    render,
    well_formed_frames,
)
from fuzz_http import http_targets
from fuzz_schema import SCHEMA
from fuzz_values import draw_examples
from hypothesis import strategies as st
from support import wait_until
from websockets.protocol import State
from ws_support import UNLIMITED_READS, Client, Game, OpenClient, StartApp, start_game

from server.app import App

CI_FRAMES = {"sqlite": 3000, "postgresql": 2000}
LONG_FRAMES = 120_000
CI_REQUESTS = 600
LONG_REQUESTS = 20_000
CI_WELL_FORMED = 600
LONG_WELL_FORMED = 20_000
BATCH = 25
MAX_PLIES = 40
LONG_CLOCK = {"kind": "fischer", "base_s": 3600, "inc_s": 0}
LONG_TIMEOUT_S = 3600  # the --long sizes; in CI each test takes seconds (and every wait has its own)
FAST = {"rate_limit_per_s": 100_000.0, "rate_limit_burst": 100_000, **UNLIMITED_READS}


@dataclass
class Tally:
    frames: int = 0
    games: int = 0
    moves: int = 0
    mutations: dict[str, int] = field(default_factory=dict)


def world(app: App, game_id: str) -> tuple[Any, ...]:
    """Everything a refused frame must leave as it was."""
    room = app.hub.room(game_id)
    assert room is not None
    return (
        room.log.version,
        room.game.ply,
        room.game.fen(),
        room.status,
        room.result,
        tuple(sorted(room.members.items())),
        tuple(box.pending_from for box in room.state.offer_boxes.values()),
        tuple(len(lines) for lines in room.chat.values()),
        tuple(room.absent),
        tuple((seek.id, seek.player.id) for seek in app.hub.seeks()),
        app.driver.connections,
        app.server.open_sockets,
    )


def live_values(
    game: Game, sender: Client, observer: Client, seek: int, rng: random.Random
) -> dict[str, Any]:
    """The values a frame's Live leaves stand for, at this moment of the game."""
    assert observer.player is not None
    return {
        "game": game.id,
        "ply": game.ply + 1,
        "move": rng.choice(game.legal),
        "seek": seek,
        "v": game.version,
        "observer": observer.player["name"],
        "name": (sender.player or observer.player)["name"],
        "token": sender.token or "Qk3",
        "tournament": "N0tThere",  # tournament frames: test_tournaments_bad_input.py's live ones
    }


async def observer_with_seek(app: App, open_client: OpenClient) -> tuple[Client, int]:
    """A third guest with an open seek (Spartan, so no fuzzed player's seek pairs with it)."""
    observer = await open_client(app, "observer")
    await observer.guest()
    seek = (await observer.ok("seek", {"variant": "spartan", "tc": LONG_CLOCK}))["seek"]
    return observer, seek


@dataclass
class Fuzz:
    """What every fuzz test uses (fixtures of tests/transport/conftest.py and tests/conftest.py)."""

    start_app: StartApp
    open_client: OpenClient
    long: bool
    caplog: pytest.LogCaptureFixture


@pytest.fixture
def fuzz(
    start_app: StartApp,
    open_client: OpenClient,
    long_sweep: bool,
    caplog: pytest.LogCaptureFixture,
) -> Fuzz:
    return Fuzz(start_app, open_client, long_sweep, caplog)


# Every test here runs on both backends; the --long sizes take many minutes.
pytestmark = [
    pytest.mark.timeout(LONG_TIMEOUT_S),
    pytest.mark.parametrize("backend", ["sqlite", "postgresql"]),
]


def assert_no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text[-2000:]


async def check_refused(client: Client, frame: Frame, live: dict[str, Any]) -> None:
    raw = frame.render(live)
    await client.ws.send(raw)
    answer = await client.recv()
    shown = f"{raw[:300]!r} ({len(raw)} chars, {frame.mutations}) -> {answer}"
    assert answer["t"] == "error", shown
    code = answer["d"]["code"]
    if frame.binary:
        assert code == "bad_frame", shown
    elif frame.cut is not None or refused_before_parsing(frame.body):
        assert code in ("bad_json", "bad_request"), shown
    else:
        assert code == "bad_request", shown
    message = answer["d"]["message"]
    assert isinstance(message, str) and 0 < len(message) < 400, shown
    assert set(answer) <= {"t", "d", "a"} and set(answer["d"]) == {"code", "message"}, shown
    assert answer.get("a") == expected_ack(frame), shown
    assert client.ws.state is State.OPEN, shown


async def new_game(app: App, open_client: OpenClient, index: int) -> tuple[Game, Client]:
    first = await open_client(app, f"p{index}a")
    second = await open_client(app, f"p{index}b")
    await first.guest()
    await second.guest()
    anonymous = await open_client(app, f"anon{index}")
    return await start_game(first, second, tc=LONG_CLOCK), anonymous


async def finish(app: App, game: Game, played: list[str]) -> None:
    """End the game (resign if the board has not) and compare the stored moves."""
    if game.ended is None:
        await game.first.ok("resign", {"game": game.id})
        await game.end()
    await wait_until(lambda: app.driver.pending_writes == 0)  # the end is written after it is shown
    stored = await app.store.get_game(game.id)
    assert stored is not None
    assert [move.uci for move in stored.moves] == played
    assert stored.status == "finished"
    for client in (game.first, game.second):
        await client.close()


async def fuzz_live_server(
    app: App, open_client: OpenClient, drawn: list[Frame], seed: int
) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    observer, seek = await observer_with_seek(app, open_client)
    game: Game | None = None
    anonymous: Client | None = None
    played: list[str] = []
    for start in range(0, len(drawn), BATCH):
        if game is None:
            game, anonymous = await new_game(app, open_client, tally.games)
            played = []
            tally.games += 1
        assert anonymous is not None
        players = {"first": game.first, "second": game.second}
        senders = [game.first, game.second, observer, anonymous]
        for frame in drawn[start : start + BATCH]:
            sender = rng.choice(senders)
            me = next((side for side, c in players.items() if c is sender), None)
            live = live_values(game, sender, observer, seek, rng)
            before = world(app, game.id)
            await check_refused(sender, frame, live)
            assert world(app, game.id) == before, (frame, me)
            tally.frames += 1
            for mutation in frame.mutations:
                tally.mutations[mutation] = tally.mutations.get(mutation, 0) + 1
        # The game goes on: one move, seen by both players; the end when it comes.
        move = rng.choice(game.legal)
        try:
            event = await game.play(move)
        except TimeoutError:
            raise AssertionError(f"{move} at ply {game.ply + 1} of {game.id}: no ack or event") from None
        played.append(move)
        tally.moves += 1
        if not event["d"]["legal"]:
            await game.end()
        if game.ended is not None or game.ply >= MAX_PLIES:
            await finish(app, game, played)
            await anonymous.close()
            game = None
    if game is not None:
        await finish(app, game, played)
    # The observer's seek and session came through untouched.
    assert [s.id for s in app.hub.seeks()] == [seek]
    assert (await observer.request("sought"))["d"]["seeks"][0]["id"] == seek
    return tally


async def test_fuzzed_frames_are_refused_and_change_nothing(fuzz: Fuzz, backend: str) -> None:
    count = LONG_FRAMES if fuzz.long else CI_FRAMES[backend]
    drawn = draw_examples(st.lists(frames(), min_size=BATCH, max_size=BATCH), count // BATCH)
    flat = [frame for batch in drawn for frame in batch]
    assert len(flat) == count
    app = await fuzz.start_app(backend, **FAST)
    tally = await fuzz_live_server(app, fuzz.open_client, flat, seed=len(flat))
    print(f"\nfuzz {backend}: {tally}")
    assert tally.frames == count
    # Every kind of mutation was tried many times.
    assert all(tally.mutations.get(m, 0) > count // 100 for m in (
        "wrong_type", "missing", "unknown_field", "bad_t", "unknown_t", "bad_d", "bad_a",
        "extra_key", "not_object", "cut", "binary", "deep_anywhere",
    )), tally.mutations
    assert {frame.kind for frame in flat} == set(SCHEMA)  # every frame type
    assert_no_errors_logged(fuzz.caplog)


async def http_get(app: App, target: str) -> tuple[int, str, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: fuzz\r\n\r\n".encode())
    await writer.drain()
    raw = await reader.read()
    writer.close()
    await writer.wait_closed()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return status, headers.get("Content-Type", ""), body


async def test_fuzzed_http_requests_are_answered_without_server_errors(fuzz: Fuzz, backend: str) -> None:
    app = await fuzz.start_app(backend, **FAST)
    first, second = await fuzz.open_client(app, "a"), await fuzz.open_client(app, "b")
    await first.guest()
    await second.guest()
    game = await start_game(first, second)
    await game.play(game.legal[0])
    await game.first.ok("resign", {"game": game.id})
    await game.end()
    count = LONG_REQUESTS if fuzz.long else CI_REQUESTS
    statuses: dict[int, int] = {}
    for target in draw_examples(http_targets(), count):
        target = target.replace("{game}", game.id)
        status, content_type, body = await http_get(app, target)
        statuses[status] = statuses.get(status, 0) + 1
        shown = f"{target[:300]} -> {status} {body[:300]!r}"
        if target.split("?", 1)[0] == "/ws":
            assert status == 426, shown  # a websocket endpoint without the upgrade
            continue
        assert status in (200, 400, 404), shown
        if target.startswith("/api/games"):
            assert content_type.startswith(("application/json", "text/plain", "application/x-chess-pgn")), shown
        if content_type.startswith("application/json"):
            answer = json.loads(body)
            if status != 200:
                assert answer["error"]["code"] in ("bad_request", "not_found", "unsupported_format"), shown
                assert answer["error"]["message"], shown
        else:
            assert body, shown
    print(f"\nhttp fuzz {backend}: {count} requests, statuses {statuses}")
    assert statuses.get(400, 0) > count // 4 and statuses.get(200, 0) > count // 20, statuses
    status, _, _ = await http_get(app, "/healthz")
    assert status == 200
    assert_no_errors_logged(fuzz.caplog)


async def test_well_formed_frames_never_fail_the_server(fuzz: Fuzz, backend: str) -> None:
    """Frames every schema accepts, with random values (and often the live game's), from both
    players and an observer: each gets exactly its answer, never ``internal_error``, the socket
    stays open, nothing is logged as an error; they may change things (a resign ends the game)."""
    count = LONG_WELL_FORMED if fuzz.long else CI_WELL_FORMED
    drawn = draw_examples(st.lists(well_formed_frames(), min_size=BATCH, max_size=BATCH), count // BATCH)
    app = await fuzz.start_app(backend, **FAST)
    observer, seek = await observer_with_seek(app, fuzz.open_client)
    game, anonymous = await new_game(app, fuzz.open_client, 0)
    rng = random.Random(count)
    codes: dict[str, int] = {}
    ack = 0
    for batch in drawn:
        senders = [game.first, game.second, observer]
        for body in batch:
            sender = rng.choice(senders)
            ack += 1
            live = live_values(game, sender, observer, seek, rng)
            await sender.ws.send(render({**body, "a": ack}, live))
            skipped: list[dict[str, Any]] = []
            while True:  # other messages (events, snapshots) may come first
                try:
                    answer = await sender.recv()
                except TimeoutError:
                    raise AssertionError(f"no answer to {body} from {sender.name}: {skipped[-5:]}") from None
                if answer.get("a") == ack:
                    break
                skipped.append(answer)
            code = answer["d"].get("code", answer["t"]) if answer["t"] == "error" else answer["t"]
            codes[code] = codes.get(code, 0) + 1
            assert code != "internal_error", (body, answer)
            assert sender.ws.state is State.OPEN, (body, answer)
        room = app.hub.room(game.id)
        if room is None or room.finished or game.ply >= MAX_PLIES:
            # Clients that stop reading would fill their queues (seek lists they watch …).
            for client in (game.first, game.second, anonymous):
                await client.close()
            game, anonymous = await new_game(app, fuzz.open_client, ack)
        else:
            # Keep the game in step with what the fuzzed frames did to it.
            game.ply, game.legal = room.game.ply, room.game.legal_moves() or game.legal
            game.version = room.log.version
    print(f"\nwell-formed {backend}: {count} frames, answers {dict(sorted(codes.items()))}")
    assert_no_errors_logged(fuzz.caplog)
    # The server still plays: a fresh game, a move acknowledged and seen by both.
    fresh, _ = await new_game(app, fuzz.open_client, -1)
    await fresh.play(fresh.legal[0])

"""The hub's own CPU per move, without sockets or a database: what the commit echo does not pay.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_move_path.py                  # this checkout
    .venv/bin/python bench/bench_move_path.py --root /old/tree # another checkout, to compare

Drives the real :class:`~server.transport.driver.HubDriver` and :class:`~server.hub.hub.Hub`
on an event loop (uvloop when installed), exactly as the websocket transport does, but with two
stand-ins at the edges: each player's outbox only keeps the frames it is given (no socket
write), and the recorder reports every write committed on the next turn of the loop (no
database). Two guests play seeded random Mini-Shogi games, each move being a frame of text that
goes through the transport's own steps (``codec.decode``, ``read_frame``,
``HubDriver.handle``), and the CPU time of every step of a move is summed (process CPU time,
best of ``--rounds``):

* ``command``: the frame's text → the move queued for its commit (decode, command, the hub,
  the rules engine's check, the persist effect);
* ``prepare``: what the driver does while the commit is in flight (``Hub.prepare``: the next
  legal moves, the outcome, the move event);
* ``persisted``: the commit reported → every frame encoded and in the recipients' outboxes
  (the ack, the room event, the event log, the timers);
* ``loop``: the rest of the move's turns of the event loop (callbacks, futures, the flusher).

The commit echo (``commit_echo.py``) pays none of these: its difference to the hub's round trip
on this machine is about this sum plus the second socket write and the client's two extra
frames (docs/benchmarks.md, "Honest baselines").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
parser.add_argument("--moves", type=int, default=20_000)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--max-plies", type=int, default=60)
ARGS = parser.parse_args()
sys.path.insert(0, ARGS.root)

from server.hub.commands import Command  # noqa: E402
from server.hub.hub import Hub  # noqa: E402
from server.hub.identity import PlayerInfo  # noqa: E402
from server.hub.incoming import read_frame  # noqa: E402
from server.transport import driver as driver_module  # noqa: E402
from server.transport.codec import decode  # noqa: E402
from server.transport.driver import HubDriver  # noqa: E402

clock = time.process_time_ns
PHASES = ("command", "prepare", "persisted", "loop")


class Sink:
    """An outbox that keeps the last frames it was given (the frames are still encoded)."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def put(self, frame: bytes) -> None:
        self.frames.append(frame)

    def close(self) -> None:
        pass


class Peer:
    def __init__(self) -> None:
        self.outbox = Sink()

    def close_soon(self, code: int, reason: str) -> None:
        pass


class InstantRecorder:
    """Every write commits on the next turn of the loop."""

    def __init__(self, spent: dict[str, int]) -> None:
        self.spent = spent

    async def write(self, record: Any) -> list[Any]:
        return []

    def submit_move(self, record: Any, written: Callable[[Any], None]) -> None:
        spent = self.spent

        def commit() -> None:
            start = clock()
            written(None)
            spent["persisted"] += clock() - start

        # After the driver's prepare step, as when the batch is on its way to the database.
        loop = asyncio.get_running_loop()
        loop.call_soon(loop.call_soon, commit)

    async def keep_versions(self, versions: Any) -> None:
        pass


def frame(t: str, d: dict[str, Any], a: int) -> str:
    return json.dumps({"t": t, "d": d, "a": a})


async def play(moves: int, seed: int) -> dict[str, int]:
    spent = dict.fromkeys(PHASES, 0)
    hub = Hub(rng=random.Random(seed))
    driver = HubDriver(hub, InstantRecorder(spent))
    prepare = driver._prepare

    def timed_prepare(tokens: list[int]) -> None:
        start = clock()
        prepare(tokens)
        spent["prepare"] += clock() - start

    driver._prepare = timed_prepare  # type: ignore[method-assign]
    peers = {}
    for name in ("alice", "bob"):
        conn = driver.new_conn_id()
        peers[conn] = Peer()
        driver.connect(conn, peers[conn], PlayerInfo(name, name, True, {}))
    conns = list(peers)
    rng = random.Random(seed)
    ack = 0
    played = 0
    tc = {"kind": "fischer", "base_s": 3600, "inc_s": 0}
    loop_start = 0
    while played < moves:
        for conn in conns:
            ack += 1
            handle(driver, conn, frame("seek", {"variant": "minishogi", "tc": tc}, ack))
        for _ in range(10):  # the game's row is written by a task: a few turns
            await asyncio.sleep(0)
        game, side, legal = last_game(peers[conns[0]].outbox.frames)
        mover = conns[0] if side == "first" else conns[1]
        ply = 0
        while legal and ply < ARGS.max_plies and played < moves:
            ack += 1
            text = frame("move", {"game": game, "ply": ply + 1, "move": rng.choice(legal)}, ack)
            loop_start = clock()
            start = clock()
            handle(driver, mover, text)
            spent["command"] += clock() - start
            for sink in (peers[c].outbox for c in conns):
                sink.frames.clear()
            # Prepare, the commit, then the flusher's turn: as the transport has them.
            for _ in range(3):
                await asyncio.sleep(0)
            spent["loop"] += clock() - loop_start
            # The move event, maybe followed by the game's end (written by then).
            events = [json.loads(raw) for raw in peers[mover].outbox.frames]
            event = next(e for e in reversed(events) if e["t"] == "move")
            legal, ply = event["d"]["legal"], event["d"]["ply"]
            mover = conns[1] if mover == conns[0] else conns[0]
            played += 1
        if legal:
            ack += 1
            handle(driver, mover, frame("resign", {"game": game}, ack))
        for _ in range(100):  # the end is written by a task: until both players are free
            if hub.active_game("alice") is None and hub.active_game("bob") is None:
                break
            await asyncio.sleep(0)
        for peer in peers.values():
            peer.outbox.frames.clear()
    spent["loop"] -= spent["command"] + spent["prepare"] + spent["persisted"]
    return spent


def handle(driver: HubDriver, conn: int, text: str) -> None:
    """What ``ClientConnection._on_frame`` does with a command frame of a logged-in player."""
    command = read_frame(decode(text))
    assert isinstance(command, Command)  # a move: what ClientConnection._dispatch matches
    driver.handle(conn, command, 0)


def last_game(frames: list[bytes]) -> tuple[str, str, list[str]]:
    """The new game of the first player, its side, and the first legal moves."""
    messages = [json.loads(raw) for raw in frames]
    start = next(m["d"] for m in messages if m["t"] == "game_start")
    state = next(m["d"] for m in messages if m["t"] == "game" and m["d"]["game"] == start["game"])
    return start["game"], start["side"], state["legal"]


async def main() -> None:
    print(f"root {ARGS.root}; {driver_module.__file__}")
    # The server's collector policy (server.app.collector): the start-up heap frozen, small
    # young collections, a timed full collection every second (when the tree has it).
    try:
        from server.app.collector import collect_and_freeze_forever, tune_garbage_collector
    except ImportError:
        print("(this tree has no server.app.collector: Python's default collector)")
    else:
        tune_garbage_collector(1.0)
        asyncio.get_running_loop().create_task(collect_and_freeze_forever(1.0))
    best: dict[str, int] | None = None
    for round_ in range(ARGS.rounds):
        spent = await play(ARGS.moves, seed=round_)
        total = sum(spent.values())
        if best is None or total < sum(best.values()):
            best = spent
    assert best is not None
    per_move = {phase: best[phase] / ARGS.moves / 1000 for phase in PHASES}
    print(
        f"µs per move (best of {ARGS.rounds} × {ARGS.moves} moves): "
        + ", ".join(f"{phase} {us:.1f}" for phase, us in per_move.items())
        + f"; total {sum(per_move.values()):.1f}"
    )


if __name__ == "__main__":
    try:
        import uvloop
    except ImportError:
        asyncio.run(main())
    else:
        uvloop.run(main())

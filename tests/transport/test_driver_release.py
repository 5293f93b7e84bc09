"""The driver's side of a move's commit: the messages the hub prepared are encoded while the
database works, and at the commit their frames are written at once (docs/architecture.md, the
driver). A real hub and driver; the recorder reports each commit on a later turn of the loop,
as the move writer's flusher does, and the outboxes record what they were given and when it
was written."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

from server.hub.commands import parse_command
from server.hub.effects import MoveAppended
from server.hub.hub import Hub
from server.hub.identity import PlayerInfo
from server.transport.codec import decode, encode_message
from server.transport.driver import HubDriver
from server.transport.driver_ports import PersistError
from server.transport.outbox import Flusher


class RecordingOutbox:
    """Takes frames like an :class:`~server.transport.outbox.Outbox` (marked on the flusher,
    written at its flush) and remembers what was written."""

    def __init__(self, flusher: Flusher) -> None:
        self.flusher = flusher
        self.batch: list[bytes] = []
        self.written: list[bytes] = []

    def put(self, frame: bytes) -> None:
        if not self.batch:
            self.flusher.mark(self)  # type: ignore[arg-type]
        self.batch.append(frame)

    def flush(self) -> None:
        self.written += self.batch
        self.batch = []

    def close(self) -> None:
        pass


class Peer:
    def __init__(self, flusher: Flusher) -> None:
        self.outbox = RecordingOutbox(flusher)

    def close_soon(self, code: int, reason: str) -> None:
        pass


class Recorder:
    """Commits every write; a move is reported by ``report`` (the test decides when)."""

    def __init__(self) -> None:
        self.moves: list[tuple[MoveAppended, Callable[[PersistError | None], None]]] = []

    async def write(self, record: Any) -> list[Any]:
        return []

    def submit_move(
        self, record: MoveAppended, written: Callable[[PersistError | None], None]
    ) -> None:
        self.moves.append((record, written))

    async def keep_versions(self, versions: Any) -> None:
        pass

    def report(self, error: PersistError | None = None) -> None:
        _, written = self.moves.pop(0)
        written(error)


async def turns(count: int = 5) -> None:
    """Let the loop run ``count`` turns (tasks just created take their steps): no clock."""
    for _ in range(count):
        await asyncio.sleep(0)


async def started_game() -> tuple[HubDriver, Recorder, dict[int, Peer], str]:
    recorder = Recorder()
    driver = HubDriver(Hub(rng=random.Random(3)), recorder)
    peers: dict[int, Peer] = {}
    for conn, name in ((1, "alice"), (2, "bob")):
        peers[conn] = Peer(driver.flusher)
        driver.connect(conn, peers[conn], PlayerInfo(name, name, True, {}))
    tc = {"kind": "fischer", "base_s": 60, "inc_s": 0}
    for conn, colour in ((1, "first"), (2, "second")):
        seek = {"t": "seek", "d": {"variant": "minishogi", "tc": tc, "colour": colour}}
        driver.handle(conn, parse_command(seek))
    await turns(20)  # the game row is written by a task
    game_id = driver.hub.active_game("alice")
    assert game_id is not None
    return driver, recorder, peers, game_id


def move(driver: HubDriver, conn: int, game_id: str, ply: int, uci: str) -> None:
    frame = {"t": "move", "d": {"game": game_id, "ply": ply, "move": uci}, "a": ply}
    driver.handle(conn, parse_command(frame))


async def test_the_commit_writes_the_frames_encoded_ahead_at_once() -> None:
    driver, recorder, peers, game_id = await started_game()
    for peer in peers.values():
        peer.outbox.written.clear()
    move(driver, 1, game_id, 1, "a1b2")
    await turns()  # the driver prepares while the "database" works
    assert [peer.outbox.written for peer in peers.values()] == [[], []]
    (ahead,) = driver._ahead.values()
    recorder.report()
    # Written within the commit's own callback: no further turn of the loop.
    mover, opponent = peers[1].outbox.written, peers[2].outbox.written
    assert [decode(f)["t"] for f in mover] == ["ack", "move"]
    assert [decode(f)["t"] for f in opponent] == ["move"]
    early = {id(frame) for _, frame in ahead.values()}
    assert {id(frame) for frame in mover + opponent} <= early
    assert opponent[0] is mover[1]  # one encoding for every recipient
    # And the frames are what encoding the messages now gives.
    for message, frame in ahead.values():
        assert encode_message(message) == frame
    assert driver._ahead == {}


async def test_frames_encoded_ahead_are_dropped_when_the_write_fails_or_the_room_changed() -> None:
    driver, recorder, peers, game_id = await started_game()
    move(driver, 1, game_id, 1, "a1b2")
    await turns()
    recorder.report(PersistError("disk full"))
    assert driver._ahead == {}
    await turns()
    assert decode(peers[1].outbox.written[-1])["d"]["code"] == "move_not_saved"
    move(driver, 1, game_id, 1, "a1b2")
    await turns()
    chat = {"t": "chat", "d": {"game": game_id, "text": "while it is written"}}
    driver.handle(2, parse_command(chat))  # takes the version the prepared event had
    await turns()
    before = len(peers[2].outbox.written)
    recorder.report()
    events = [decode(f) for f in peers[2].outbox.written[before:]]
    assert [e["t"] for e in events] == ["move"]
    chats = [decode(f) for f in peers[2].outbox.written[:before]]
    assert events[0]["v"] == max(c["v"] for c in chats if c["t"] == "chat") + 1
    assert driver._ahead == {}


async def test_a_move_in_flight_is_waited_for_and_forgotten_at_its_commit() -> None:
    driver, recorder, peers, game_id = await started_game()
    move(driver, 1, game_id, 1, "a1b2")
    assert driver.pending_writes == 1
    closing = asyncio.create_task(driver.close(timeout=30))
    await turns()
    assert not closing.done()  # close() waits for the move's commit
    recorder.report()
    # Forgotten within the commit's own callback: nothing is left for a later turn.
    assert driver.pending_writes == 0
    assert driver._chains == {}
    await asyncio.wait_for(closing, 5)
    assert [decode(f)["t"] for f in peers[1].outbox.written[-2:]] == ["ack", "move"]


async def test_the_end_a_move_brings_is_written_after_the_move() -> None:
    driver, recorder, peers, game_id = await started_game()
    move(driver, 1, game_id, 1, "a1b2")
    await turns()
    resign = {"t": "resign", "d": {"game": game_id}, "a": 99}
    driver.handle(2, parse_command(resign))  # refused while the move is being written
    assert decode(peers[2].outbox.batch[-1])["d"]["code"] == "busy"
    recorder.report()
    driver.handle(2, parse_command(resign))  # now a write of its own, not chained to the move
    await turns(20)
    ends = [decode(f) for f in peers[1].outbox.written if decode(f)["t"] == "end"]
    assert [e["d"]["termination"] for e in ends] == ["resignation"]
    assert driver.pending_writes == 0

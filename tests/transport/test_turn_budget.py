"""The per-turn budget of bursty work (server/transport/turns.py) and the flusher's budget
(server/transport/outbox.py): a burst is spread over turns of at most the budget, in order,
and nothing is lost. Injected clocks; no sockets."""

from __future__ import annotations

import asyncio

import pytest

from server.transport import outbox as outbox_module
from server.transport.outbox import FLUSH_UNTIMED, Flusher
from server.transport.turns import TurnBudget


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Turns:
    """Counts the loop's turns (one tick per turn while running)."""

    def __init__(self) -> None:
        self.count = 0
        self._handle: asyncio.Handle | None = None

    def start(self) -> None:
        self._tick()

    def _tick(self) -> None:
        self.count += 1
        self._handle = asyncio.get_running_loop().call_soon(self._tick)

    def stop(self) -> None:
        assert self._handle is not None
        self._handle.cancel()


async def test_a_burst_waits_for_later_turns_in_order_within_the_budget() -> None:
    clock = FakeClock()
    budget = TurnBudget(0.005, clock)
    turns = Turns()
    turns.start()
    done: list[tuple[int, int]] = []  # (item, turn)

    async def work(item: int) -> None:
        await budget.wait()
        clock.now += 0.002  # each item costs 2 ms
        done.append((item, turns.count))

    # 40 items arrive in the same turn: the first ones run at once, the rest queue.
    tasks = [asyncio.get_running_loop().create_task(work(i)) for i in range(40)]
    await asyncio.wait_for(asyncio.gather(*tasks), 10)
    turns.stop()
    assert [item for item, _ in done] == list(range(40))  # in order of arrival
    per_turn: dict[int, int] = {}
    for _, turn in done:
        per_turn[turn] = per_turn.get(turn, 0) + 1
    # 5 ms of budget: at most 3 items of 2 ms start in a turn (the third starts at 4 ms), and
    # the first of a release, which goes even in a spent turn (progress under load).
    assert max(per_turn.values()) <= 4
    assert len(per_turn) >= 40 // 4
    assert budget.waiting == 0


async def test_a_newcomer_does_not_overtake_those_waiting() -> None:
    clock = FakeClock()
    budget = TurnBudget(0.005, clock)
    order: list[str] = []

    async def work(name: str) -> None:
        await budget.wait()
        clock.now += 0.004
        order.append(name)

    first = [asyncio.get_running_loop().create_task(work(f"a{i}")) for i in range(4)]
    await asyncio.sleep(0)  # a0 and a1 ran (8 ms), a2 and a3 wait
    assert budget.waiting == 2
    assert budget.busy()
    late = asyncio.get_running_loop().create_task(work("late"))
    await asyncio.wait_for(asyncio.gather(*first, late), 10)
    assert order == ["a0", "a1", "a2", "a3", "late"]


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    clock = FakeClock()
    budget = TurnBudget(0.005, clock)

    async def spend() -> None:
        assert not budget.spent()
        clock.now += 0.01

    loop = asyncio.get_running_loop()
    spender = loop.create_task(spend())  # runs first in the waiter's turn, spends it
    waiter = loop.create_task(budget.wait())
    await asyncio.sleep(0)
    assert budget.waiting == 1
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await spender
    assert budget.waiting == 0


class FakeOutbox:
    """Takes frames as an Outbox does: marked on the flusher when its batch starts, written
    (to ``sent``) when flushed; each flush costs ``cost`` seconds of the fake clock."""

    def __init__(
        self,
        flusher: Flusher,
        clock: FakeClock,
        sent: list[tuple[int, int]],
        key: int,
        size: int = 100,
    ):
        self.flusher, self.clock, self.sent, self.key, self.size = flusher, clock, sent, key, size
        self.batch: list[int] = []
        self.flushes = 0

    def batch_bytes(self) -> int:
        return self.size * len(self.batch)

    def put(self, frame: int) -> None:
        if not self.batch:
            self.flusher.mark(self)  # type: ignore[arg-type]
        self.batch.append(frame)

    def flush(self) -> None:
        self.flushes += 1
        self.clock.now += 0.001
        frames, self.batch = self.batch, []
        self.sent.extend((self.key, frame) for frame in frames)


async def test_a_large_flush_writes_at_most_its_budget_per_callback_and_everything_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(outbox_module.time, "perf_counter", clock)
    sent: list[tuple[int, int]] = []
    calls: list[int] = []

    class CountedFlusher(Flusher):
        def flush(self) -> None:
            before = sum(outbox.flushes for outbox in outboxes)
            super().flush()
            calls.append(sum(outbox.flushes for outbox in outboxes) - before)

    flusher = CountedFlusher()
    outboxes = [FakeOutbox(flusher, clock, sent, key) for key in range(100)]
    for outbox in outboxes:
        outbox.put(0)
    await asyncio.sleep(0)  # the first callback: 4 ms of 1 ms outboxes, then it yields
    assert 0 < len(sent) < 100
    for outbox in outboxes:  # more frames, for those written and those left over alike
        outbox.put(1)
    for _ in range(100):
        if len(sent) == 200:
            break
        await asyncio.sleep(0)
    # Every frame once, each connection's in order.
    assert sorted(sent) == [(key, frame) for key in range(100) for frame in (0, 1)]
    for key in range(100):
        assert [frame for k, frame in sent if k == key] == [0, 1]
    # 4 ms of budget: 5 outboxes written in a callback (the fifth ends past it); the last
    # callback, with 16 left or fewer, writes them all.
    assert calls[0] == 5
    assert max(calls) <= FLUSH_UNTIMED
    assert all(outbox.flushes <= 2 for outbox in outboxes)


async def test_a_small_flush_writes_everything_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(outbox_module.time, "perf_counter", clock)
    flusher = Flusher()
    sent: list[tuple[int, int]] = []
    outboxes = [FakeOutbox(flusher, clock, sent, key) for key in range(FLUSH_UNTIMED)]
    for outbox in outboxes:
        outbox.put(0)
    await asyncio.sleep(0)
    assert len(sent) == FLUSH_UNTIMED


async def test_a_large_flush_writes_small_batches_before_large_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A player's frames do not wait behind a standings push to hundreds of spectators."""
    clock = FakeClock()
    monkeypatch.setattr(outbox_module.time, "perf_counter", clock)
    flusher = Flusher()
    sent: list[tuple[int, int]] = []
    spectators = [FakeOutbox(flusher, clock, sent, key, size=200_000) for key in range(50)]
    players = [FakeOutbox(flusher, clock, sent, 100 + key) for key in range(3)]
    for spectator in spectators:
        spectator.put(0)
    for player in players:  # marked last: written first
        player.put(0)
    await asyncio.sleep(0)
    assert [key for key, _ in sent[:3]] == [100, 101, 102]
    assert len(sent) < 53  # the budget left the other spectators for later turns
    for _ in range(100):
        if len(sent) == 53:
            break
        await asyncio.sleep(0)
    assert sorted(key for key, _ in sent) == [*range(50), 100, 101, 102]


async def test_waiters_progress_while_every_turn_is_spent_by_other_work() -> None:
    """Other work (reads, timers) spending every turn's budget does not starve the waiters:
    the first of each release goes."""
    clock = FakeClock()
    budget = TurnBudget(0.005, clock)
    turns = 0

    def other_work() -> None:
        nonlocal turns
        turns += 1
        budget.spent()  # starts this turn's clock
        clock.now += 0.01  # and spends it
        handles.append(asyncio.get_running_loop().call_soon(other_work))

    handles: list[asyncio.Handle] = []
    other_work()
    done: list[int] = []

    async def work(item: int) -> None:
        await budget.wait()
        done.append(item)

    tasks = [asyncio.get_running_loop().create_task(work(i)) for i in range(5)]
    await asyncio.wait_for(asyncio.gather(*tasks), 10)
    handles[-1].cancel()
    assert done == list(range(5))
    assert turns < 40

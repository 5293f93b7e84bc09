"""Offer state machine, versioned event log with replay, deadline timers."""

import random

import pytest

from server.hub.errors import CommandError
from server.hub.eventlog import Audience, EventLog
from server.hub.offers import OfferBox
from server.hub.timers import Timers
from server.rules import Side


def test_offer_then_accept() -> None:
    box = OfferBox("draw")
    assert box.offer(Side.FIRST) is False and box.pending_from == Side.FIRST
    box.accept(Side.SECOND)
    assert not box.pending


def test_offer_then_decline() -> None:
    box = OfferBox("draw")
    box.offer(Side.SECOND)
    box.decline(Side.FIRST)
    assert box.pending_from is None


def test_mutual_offer_is_agreement() -> None:
    box = OfferBox("draw")
    box.offer(Side.FIRST)
    assert box.offer(Side.SECOND) is True
    assert not box.pending


def test_repeated_offer_is_refused() -> None:
    box = OfferBox("draw")
    box.offer(Side.FIRST)
    with pytest.raises(CommandError) as caught:
        box.offer(Side.FIRST)
    assert caught.value.code == "offer_pending"
    assert box.pending_from == Side.FIRST


@pytest.mark.parametrize("pending_from", [None, Side.FIRST])
def test_answering_without_opponent_offer_is_refused(pending_from: Side | None) -> None:
    box = OfferBox("takeback")
    if pending_from is not None:
        box.offer(pending_from)
    for answer in (box.accept, box.decline):
        with pytest.raises(CommandError) as caught:
            answer(Side.FIRST)
        assert caught.value.code == "no_offer"
    assert box.pending_from == pending_from


def test_cancel_reports_who_offered() -> None:
    box = OfferBox("draw")
    assert box.cancel() is None
    box.offer(Side.SECOND)
    assert box.cancel() == Side.SECOND and not box.pending


def test_versions_are_monotonic_and_stamped() -> None:
    log = EventLog(capacity=10)
    assert log.version == 0
    events = [log.append("e", {"i": i}) for i in range(3)]
    assert [e.version for e in events] == [1, 2, 3]
    assert [e.message.v for e in events] == [1, 2, 3]


def test_replay_since_a_version() -> None:
    log = EventLog(capacity=10)
    for i in range(5):
        log.append("e", {"i": i})
    replay = log.since(2)
    assert replay is not None and [e.version for e in replay] == [3, 4, 5]
    assert log.since(5) == []


def test_replay_too_old_or_from_the_future_needs_snapshot() -> None:
    log = EventLog(capacity=3)
    for i in range(6):
        log.append("e", {"i": i})
    # Kept: 4, 5, 6.
    assert log.since(2) is None
    replay = log.since(3)
    assert replay is not None and [e.version for e in replay] == [4, 5, 6]
    assert log.since(7) is None
    assert log.since(-1) is None


def test_empty_log_replay() -> None:
    log = EventLog()
    assert log.since(0) == []
    assert log.since(1) is None


def test_audiences() -> None:
    assert Audience.EVERYONE.includes(True) and Audience.EVERYONE.includes(False)
    assert Audience.PLAYERS.includes(True) and not Audience.PLAYERS.includes(False)
    assert Audience.SPECTATORS.includes(False) and not Audience.SPECTATORS.includes(True)


def test_timers_fire_in_order_and_replace() -> None:
    timers = Timers()
    timers.set("a", 30)
    timers.set("b", 10)
    timers.set("c", 20)
    timers.set("b", 25)  # replaces 10
    timers.clear("c")
    assert timers.next_deadline() == 25
    assert timers.pop_due(24) == []
    assert timers.pop_due(30) == ["b", "a"]
    assert timers.next_deadline() is None and len(timers) == 0


def test_timers_keep_memory_proportional_to_the_live_deadlines() -> None:
    """Deadlines that move with every move (a running clock) leave stale heap entries; the
    heap is rebuilt before they outnumber the live ones, and still fires in order."""
    rng = random.Random(4)
    timers = Timers()
    expected: dict[str, int] = {}
    for step in range(20_000):
        key = f"room{rng.randrange(100)}"
        at = 1_000_000 + rng.randrange(10_000_000)
        if step % 97 == 0:
            timers.clear(key)
            expected.pop(key, None)
        else:
            timers.set(key, at)
            expected[key] = at
            assert len(timers._heap) <= 2 * len(expected) + 64
    assert len(timers) == len(expected)
    fired = timers.pop_due(10**9)
    assert fired == sorted(expected, key=lambda k: expected[k])


def test_timers_set_none_clears() -> None:
    timers = Timers()
    timers.set("a", 5)
    timers.set("a", None)
    assert timers.next_deadline() is None

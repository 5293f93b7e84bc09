"""Public settings that let several hubs share one lobby and hand games over: the seek and
challenge id base (``Hub.set_id_base``) and a restored room's first event version
(``Hub.restore_game(..., first_version=...)``). Manual clock, no event loop."""

from typing import Any

import pytest
from hub_harness import FISCHER_TC, Harness, one, player
from test_hub_restore import START_FEN, TERMS, played_game

from server.hub.eventlog import EventLog
from server.hub.lobby import IdCounter
from server.hub.messages import Message

BASE = 1 << 32


def issue_ids(h: Harness) -> tuple[list[int], list[int]]:
    """Post manual seeks (never paired) and challenges; their ids, as the acks gave them."""
    names = ["alice", "bob", "carol", "dave"]
    for conn, name in enumerate(names, start=1):
        h.connect(conn, player(name))
    h.clear()
    seek_ids: list[int] = []
    challenge_ids: list[int] = []
    for conn in range(1, len(names) + 1):
        for _ in range(3):
            h.send(conn, "seek", ack=1, variant="minishogi", tc=FISCHER_TC, manual=True)
            seek_ids.append(one(h.inbox(conn), "ack").d["seek"])
        for target in names:
            if target != names[conn - 1] and len(challenge_ids) < 3 * conn:
                h.send(conn, "match", ack=2, to=target, variant="minishogi", tc=FISCHER_TC)
                challenge_ids.append(one(h.inbox(conn), "ack").d["challenge"])
    assert sorted(s.id for s in h.hub.seeks()) == sorted(seek_ids)
    assert all(h.hub.challenge(c) is not None for c in challenge_ids)
    return seek_ids, challenge_ids


def test_ids_count_up_from_the_base() -> None:
    plain, based = Harness(), Harness()
    based.hub.set_id_base(BASE)
    seeks, challenges = issue_ids(plain)
    assert seeks == list(range(1, 13)) and challenges == list(range(1, 13))
    seeks, challenges = issue_ids(based)
    assert seeks == list(range(BASE + 1, BASE + 13))
    assert challenges == list(range(BASE + 1, BASE + 13))


def test_ids_of_hubs_with_different_bases_never_collide() -> None:
    hubs = [Harness(seed=1), Harness(seed=1), Harness(seed=1)]
    for index, h in enumerate(hubs):
        h.hub.set_id_base(index * BASE)
    issued = [issue_ids(h) for h in hubs]
    all_seeks = [i for seeks, _ in issued for i in seeks]
    all_challenges = [i for _, challenges in issued for i in challenges]
    assert len(set(all_seeks)) == len(all_seeks) == 36
    assert len(set(all_challenges)) == len(all_challenges) == 36


def test_id_base_is_fixed_once_an_id_was_issued() -> None:
    h = Harness()
    with pytest.raises(ValueError, match="negative"):
        h.hub.set_id_base(-1)
    h.hub.set_id_base(BASE)
    h.hub.set_id_base(2 * BASE)  # nothing issued yet: may still change
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    h.send(1, "match", ack=1, to="bob", variant="minishogi", tc=FISCHER_TC)
    assert one(h.inbox(1), "ack").d["challenge"] == 2 * BASE + 1
    with pytest.raises(ValueError, match="issued"):
        h.hub.set_id_base(3 * BASE)
    # Refused as a whole: the seek counter, still unused, kept its base too.
    h.send(1, "seek", ack=2, variant="minishogi", tc=FISCHER_TC, manual=True)
    assert one(h.inbox(1), "ack").d["seek"] == 2 * BASE + 1


def test_id_counter() -> None:
    ids = IdCounter(10)
    assert (ids.base, ids.issued) == (10, False)
    assert [ids.next(), ids.next()] == [11, 12] and ids.issued
    with pytest.raises(ValueError):
        ids.set_base(100)


# --- a restored room's first event version ------------------------------------------------------


def versions(messages: list[Message]) -> list[int]:
    return [m.v for m in messages if m.v is not None]


def test_restored_room_starts_its_versions_at_first_version() -> None:
    first = 1_700_000_000_001
    moves = played_game(["a1b2", "a5a2"])
    h = Harness()
    h.connect(1, player("alice"))
    h.clear()
    h.run(
        h.hub.restore_game(
            "r1",
            TERMS,
            (player("alice"), player("bob")),
            START_FEN,
            moves,
            h.now,
            first_version=first,
        )
    )
    room = h.hub.room("r1")
    assert room is not None
    received = h.inbox(1)
    # Alice is joined with a snapshot before any event; bob's absence is the first event.
    assert one(received, "game").v == first - 1
    gone = one(received, "gone")
    assert gone.v == first and room.log.version == first
    # Later events keep counting up from there.
    h.connect(2, player("bob"))
    h.send(2, "join", game="r1")
    h.advance(1_000)
    h.send(1, "move", game="r1", ply=3, move="b2c3")
    h.advance(1_000)
    h.send(2, "move", game="r1", ply=4, move="d5c4")
    seen = versions(h.inbox(1))
    assert seen and seen[0] > first
    assert seen == sorted(set(seen)) and room.log.version == seen[-1]
    # A client that saw the first event gets the rest replayed ...
    h.connect(3, player("carol"))
    h.send(3, "join", game="r1", v=first)
    assert versions(h.inbox(3)) == [v for v in seen if v > first]
    # ... and one with a version from before the takeover gets a snapshot, flagged in the ack.
    h.send(3, "join", game="r1", v=5)
    received = h.inbox(3)
    assert [m.t for m in received if m.v is not None] == ["game"]
    assert one(received, "ack").d["snapshot"] is True


def test_versions_continue_without_a_gap_in_the_next_hub() -> None:
    """A hub that stops keeps each running room's last version; the next one resumes there."""
    moves = played_game(["a1b2", "a5a2"])
    players = (player("alice"), player("bob"))
    old = Harness()
    old.connect(1, player("alice"))
    old.connect(2, player("bob"))
    old.run(old.hub.restore_game("r1", TERMS, players, START_FEN, moves, old.now))
    old.send(1, "join", game="r1")
    old.send(2, "join", game="r1")
    old.send(1, "move", game="r1", ply=3, move="b2c3")
    last_seen = versions(old.inbox(2))[-1]
    kept = old.hub.running_versions()
    assert kept == {"r1": last_seen}

    new = Harness()
    new.run(
        new.hub.restore_game(
            "r1",
            TERMS,
            players,
            START_FEN,
            [*moves, *played_game(["a1b2", "a5a2", "b2c3"])[2:]],
            new.now,
            first_version=kept["r1"] + 1,
        )
    )
    new.connect(2, player("bob"))
    new.send(2, "join", game="r1", v=last_seen, ack=1)
    received = new.inbox(2)
    assert one(received, "ack").d["snapshot"] is False
    # gone (both absent at the restore), then back (bob connected): one gapless sequence
    assert versions(received) == [last_seen + 1, last_seen + 2, last_seen + 3]


def test_restore_defaults_to_version_one_and_refuses_below() -> None:
    moves = played_game(["a1b2"])
    h = Harness()
    players = (player("alice"), player("bob"))
    with pytest.raises(ValueError, match="first_version"):
        h.hub.restore_game("r0", TERMS, players, START_FEN, moves, h.now, first_version=0)
    assert h.hub.room("r0") is None
    h.run(h.hub.restore_game("r1", TERMS, players, START_FEN, moves, h.now))
    room = h.hub.room("r1")
    assert room is not None and room.log.version == 2  # both players absent: events 1 and 2


def test_event_log_first_version() -> None:
    log = EventLog(capacity=3, first_version=1_000)
    assert log.version == 999 and log.since(999) == []
    assert log.since(5) is None  # a version from before: snapshot
    events: list[Any] = [log.append("e", {"i": i}) for i in range(4)]
    assert [e.version for e in events] == [1_000, 1_001, 1_002, 1_003]
    replay = log.since(1_000)
    assert replay is not None and [e.version for e in replay] == [1_001, 1_002, 1_003]
    with pytest.raises(ValueError):
        EventLog(first_version=0)

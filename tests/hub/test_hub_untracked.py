"""What a room keeps for a game's whole life (its event log, its moves) is kept in forms the
cyclic garbage collector does not track, so that full collections do not scan it
(docs/benchmarks.md, "Garbage collection"); replay still gives the same events."""

from __future__ import annotations

import gc
import random

from hub_harness import Harness, play, player, start_game

from server.hub.eventlog import EventLog, freeze, thaw
from server.hub.room import GameRoom
from server.rules import Game, MoveList, MoveRecord, get_variant


def room_of(h: Harness, game_id: str) -> GameRoom:
    room = h.hub.room(game_id)
    assert room is not None
    return room


def random_line(plies: int, seed: int) -> list[str]:
    """Random legal Mini-Shogi moves from the start."""
    game = Game(get_variant("minishogi"))
    rng = random.Random(seed)
    line: list[str] = []
    for _ in range(plies):
        legal = game.legal_moves()
        if not legal:
            break
        line.append(rng.choice(legal))
        game.play(line[-1])
    return line


def test_freeze_and_thaw_round_trip_json_values() -> None:
    payload = {
        "game": "abc",
        "ply": 3,
        "check": False,
        "winner": None,
        "clocks": {"first": {"ms": 1_000, "periods": 0}, "second": {"ms": 900, "periods": 0}},
        "legal": ["a1a2", "b1b2"],
        "empty": [],
        "pairs": [[1, 2], {"k": "v"}, {}],
    }
    frozen = freeze(payload)
    assert thaw(frozen) == payload
    assert freeze(payload, ("v", 1))[:2] == ("v", 1) and thaw(freeze(payload, ("v",)), 1) == payload
    assert thaw(freeze([])) == [] and thaw(freeze("x")) == "x"
    gc.collect()  # one collection: the flat form has no tuple inside to wait for
    assert not gc.is_tracked(frozen)


def test_room_event_log_and_moves_are_untracked_and_replay_unchanged() -> None:
    h = Harness()
    game_id = start_game(h)
    h.connect(3, player("carol"))
    h.send(3, "join", game=game_id, v=0)
    h.clear()
    play(h, game_id, random_line(30, seed=11))
    h.send(1, "chat", game=game_id, text="players only")
    h.send(3, "chat", game=game_id, text="spectators only")
    room = room_of(h, game_id)
    seen_by_spectator = [m for m in h.inbox(3) if m.v is not None]
    seen_by_player = [m for m in h.inbox(1) if m.v is not None]
    assert len(room.records) >= 20 and len(seen_by_spectator) >= 20

    gc.collect()
    stored_events = list(room.log._events)
    stored_moves = list(room.records._rows)
    assert stored_events and all(not gc.is_tracked(e) for e in stored_events)
    assert stored_moves and all(not gc.is_tracked(m) for m in stored_moves)

    # Replay gives the very messages the members were sent live, audiences kept apart.
    first_seen = seen_by_spectator[0].v
    assert first_seen is not None
    for since, seen, is_player in (
        (first_seen - 1, seen_by_spectator, False),
        (first_seen - 1, seen_by_player, True),
    ):
        replay = room.log.since(since)
        assert replay is not None
        assert [e.message for e in replay if e.audience.includes(is_player)] == seen
    # And the moves read back as the records played.
    assert [r.ply for r in room.records] == list(range(1, len(room.records) + 1))
    assert room.records[-1] == MoveRecord(*stored_moves[-1])


def test_event_log_returns_the_live_event_and_replays_an_equal_one() -> None:
    log = EventLog(capacity=5)
    data = {"game": "g", "legal": ["a", "b"], "clocks": {"first": 1}}
    event = log.append("move", data)
    assert event.message.d is data  # the live event shares the caller's payload
    replay = log.since(0)
    assert replay == [event]


def test_move_list_reads_like_a_list_of_records() -> None:
    records = [MoveRecord(ply, f"m{ply}", f"d{ply}", 1_000 - ply, ply, None) for ply in range(1, 6)]
    moves = MoveList(records[:3])
    moves.append(records[3])
    moves.append(records[4])
    assert list(moves) == records and moves == records and len(moves) == 5
    assert moves[0] == records[0] and moves[-2:] == records[-2:]
    assert moves.pop() == records[4] and moves == records[:4]
    moves.clear()
    assert not moves and moves == []

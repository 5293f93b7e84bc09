"""A game's end is written before anyone hears of it, like a move.

A player's ending (resignation, draw agreement or claim, abort, abandonment claim) whose write
fails is refused with ``*_not_saved`` and changes nothing; an ending the server decided (flag
fall, first-move timeout, an engine outcome) is final, stays unannounced until stored and is
never dropped by a failed write. Manual clock, no event loop.
"""

from collections.abc import Callable

import pytest
from hub_harness import MATE_LINE, Harness, one, play, player, room_of, start_game, wild_game

from server.hub.effects import GameFinished, Persist
from server.hub.room import GameRoom
from server.rules import Side


def visible(room: GameRoom) -> tuple[object, ...]:
    """Everything a player could observe of a room (besides messages)."""
    return (
        room.status,
        room.result,
        room.log.version,
        [r.uci for r in room.records],
        room.clock.state(),
        {kind: box.pending_from for kind, box in room.state.offer_boxes.items()},
    )


def pending_end(h: Harness) -> GameFinished:
    assert len(h.pending) == 1
    record = h.pending[0].record
    assert isinstance(record, GameFinished)
    return record


def minishogi_after(h: Harness, moves: list[str]) -> str:
    game_id = start_game(h)
    play(h, game_id, moves)
    h.commit_all()
    h.clear()
    return game_id


# Each case: (set up a game and return its id, the ending command (conn, t, payload), the
# refusal code, (result, termination) once stored).
Setup = Callable[[Harness], str]


def _resign(h: Harness) -> str:
    return minishogi_after(h, MATE_LINE[:1])


def _abort(h: Harness) -> str:
    return minishogi_after(h, MATE_LINE[:1])


def _abandon(h: Harness) -> str:
    game_id = minishogi_after(h, MATE_LINE[:2])
    h.disconnect(2)
    h.tick(h.now + room_of(h, game_id).state.abandon_countdown_ms())
    h.commit_all()
    h.clear()
    return game_id


def _draw_accept(h: Harness) -> str:
    game_id, cycle = wild_game(h)
    play(h, game_id, cycle[:2])
    h.send(2, "draw_offer", game=game_id)
    h.commit_all()
    h.clear()
    return game_id


def _draw_claim(h: Harness) -> str:
    game_id, cycle = wild_game(h)
    play(h, game_id, cycle * 2)
    h.commit_all()
    h.clear()
    return game_id


PLAYER_ENDINGS = [
    ("resign", _resign, "resign", {}, "resign_not_saved", ("0-1", "resignation")),
    ("abort", _abort, "abort", {}, "abort_not_saved", (None, "abort")),
    ("abandon", _abandon, "abandon_claim", {"outcome": "win"}, "abandon_not_saved",
     ("1-0", "abandonment")),
    ("draw_accept", _draw_accept, "draw_accept", {}, "draw_not_saved", ("1/2-1/2", "agreement")),
    ("draw_offer_crossing", _draw_accept, "draw_offer", {}, "draw_not_saved",
     ("1/2-1/2", "agreement")),
    ("draw_claim", _draw_claim, "claim_draw", {}, "draw_not_saved", ("1/2-1/2", "repetition")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "command", "payload", "refusal", "outcome"),
    [case[1:] for case in PLAYER_ENDINGS],
    ids=[case[0] for case in PLAYER_ENDINGS],
)
def test_player_ending_is_announced_only_once_stored_and_a_failed_write_changes_nothing(
    setup: Setup,
    command: str,
    payload: dict[str, str],
    refusal: str,
    outcome: tuple[str | None, str],
) -> None:
    h = Harness(auto_commit=False)
    game_id = setup(h)
    room = room_of(h, game_id)
    h.connect(9, player("carol"))  # a spectator
    h.send(9, "join", game=game_id)
    h.clear()
    h.published.clear()
    before = visible(room)
    h.send(1, command, game=game_id, ack=7, **payload)
    record = pending_end(h)
    assert not record.server_decided
    assert (record.result, record.termination) == outcome
    # Nobody hears of it, the asker included, while it is being written; the room is busy.
    assert h.inbox(1) == h.inbox(2) == h.inbox(9) == [] and h.published == []
    assert visible(room) == before and h.hub.next_deadline() is None
    h.send(1, "resign", game=game_id, ack=1)
    assert one(h.inbox(1), "error").d["code"] == "busy"

    h.fail("the database is unavailable")
    refused = one(h.inbox(1), "error")
    assert refused.a == 7 and refused.d["code"] == refusal
    assert "the database is unavailable" in refused.d["message"]
    assert refused.d["state"]["status"] == "started"
    assert h.inbox(2) == h.inbox(9) == [] and visible(room) == before and h.published == []
    assert h.hub.active_game("alice") == game_id

    # The same command again, stored this time: acknowledged, then announced to everyone.
    h.send(1, command, game=game_id, ack=8, **payload)
    h.commit()
    mine, theirs = h.inbox(1), h.inbox(9)
    assert one(mine, "ack").a == 8
    end = one(theirs, "end")
    assert (end.d["result"], end.d["termination"]) == outcome
    assert one(mine, "end") == end
    assert room.finished and (room.result, room.termination) == outcome
    assert [p.message.t for p in h.published if p.channel == "games"] == ["game_end"]
    assert h.hub.active_game("alice") is None


def test_draw_agreement_keeps_the_offer_when_its_write_fails() -> None:
    h = Harness(auto_commit=False)
    game_id = _draw_accept(h)
    room = room_of(h, game_id)
    h.send(1, "draw_accept", game=game_id)
    h.fail()
    assert room.offers.pending_from("draw") == 1  # still bob's offer to answer
    h.send(1, "draw_accept", game=game_id)
    h.commit()
    offer = [m for m in h.inbox(2) if m.t == "offer"]
    assert [m.d["action"] for m in offer] == ["accept"]


def expect_server_end(h: Harness, game_id: str, fire: Callable[[], object]) -> GameFinished:
    """Fire a server-decided ending and check that it is final but unannounced while its write
    fails, then announced once stored."""
    room = room_of(h, game_id)
    h.clear()
    fire()
    record = pending_end(h)
    assert record.server_decided
    assert "end" not in [m.t for m in h.inbox(1) + h.inbox(2)]
    version = room.log.version
    assert not room.finished and h.hub.next_deadline() is None
    h.fail("the database is unavailable")  # the adapter retries; the hub keeps the decision
    assert h.inbox(1) == [] and h.inbox(2) == [] and room.log.version == version
    h.send(1, "move", game=game_id, ply=len(room.records) + 1, move="a1a2", ack=3)
    h.send(2, "resign", game=game_id, ack=4)
    assert one(h.inbox(1), "error").d["code"] == "game_over"
    assert one(h.inbox(2), "error").d["code"] == "game_over"
    assert not room.finished and h.pending == []
    # The adapter's retry of the same write, stored now.
    token = room.state.pending_token()
    assert token is not None
    h.pending.append(Persist(token, record))
    h.commit()
    end = one(h.inbox(2), "end")
    assert end.d["termination"] == record.termination and room.finished
    return record


def test_flag_fall_is_final_and_announced_once_stored() -> None:
    h = Harness(auto_commit=False)
    game_id = minishogi_after(h, MATE_LINE[:2])
    deadline = h.hub.next_deadline()
    assert deadline is not None
    record = expect_server_end(h, game_id, lambda: h.tick(deadline + 10_000))
    assert (record.result, record.termination, record.ended_ms) == ("0-1", "time", deadline)
    end_clocks = room_of(h, game_id).state.snapshot(h.now, Side.FIRST).d["clocks"]
    assert end_clocks["first"]["ms"] == 0 and end_clocks["running"] is None


def test_first_move_timeout_is_final_and_announced_once_stored() -> None:
    h = Harness(auto_commit=False)
    game_id = minishogi_after(h, [])
    deadline = h.hub.next_deadline()
    assert deadline is not None
    record = expect_server_end(h, game_id, lambda: h.tick(deadline))
    assert (record.result, record.termination) == (None, "abort")


def test_engine_outcome_after_a_stored_move_is_final_and_announced_once_stored() -> None:
    h = Harness(auto_commit=False)
    game_id = minishogi_after(h, MATE_LINE[:3])

    def mate() -> None:
        h.send(2, "move", game=game_id, ply=4, move=MATE_LINE[3])
        h.commit()  # the move is stored and shown; its checkmate is being written

    record = expect_server_end(h, game_id, mate)
    assert (record.result, record.termination) == ("0-1", "checkmate")

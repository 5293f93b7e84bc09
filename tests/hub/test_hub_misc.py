"""Hub edges: adapter misuse, bad frames, several rooms per tick, larger variants."""

import pytest
from hub_harness import FISCHER_TC, Harness, one, player, start_game

from server.hub.commands import bad_request, parse_command
from server.hub.effects import MoveAppended
from server.hub.errors import ProtocolError
from server.hub.identity import Rating


def test_bad_frame_answer_echoes_the_ack_id() -> None:
    frame = {"t": "move", "d": {"game": "g"}, "a": 12}
    with pytest.raises(ProtocolError) as caught:
        parse_command(frame)
    message = bad_request(frame, caught.value)
    assert message.to_json_obj() == {
        "t": "error",
        "d": {"code": "bad_request", "message": "move: missing field 'ply'"},
        "a": 12,
    }


def test_adapter_misuse_raises() -> None:
    h = Harness()
    with pytest.raises(ValueError):
        h.hub.handle(1, parse_command({"t": "sought"}), h.now)
    h.connect(1, player("alice"))
    with pytest.raises(ValueError):
        h.hub.connect(1, player("alice"), h.now)
    with pytest.raises(ValueError):
        h.hub.persisted(12345, h.now)
    assert h.hub.disconnect(99, h.now) == []


def test_one_tick_fires_every_due_room() -> None:
    h = Harness()
    first = start_game(h)
    h.connect(3, player("carol"))
    h.connect(4, player("dave"))
    h.send(3, "seek", variant="minishogi", tc=FISCHER_TC)
    h.send(4, "seek", variant="minishogi", tc=FISCHER_TC)
    second = h.hub.active_game("carol")
    assert second is not None and second != first
    h.tick(h.now + 30_000)
    for game_id in (first, second):
        room = h.hub.room(game_id)
        assert room is not None and room.termination == "abort"


def test_set_rating_is_used_by_later_seeks() -> None:
    h = Harness()
    h.connect(1, player("alice", 1500))
    h.hub.set_rating("alice", ("minishogi", "bullet"), Rating(1850.0, 50.0))
    h.send(1, "seek", variant="minishogi", tc=FISCHER_TC)  # 60+1 is bullet
    assert h.hub.seeks()[0].rating == 1850.0


@pytest.mark.parametrize("variant", ["shoshogi", "daishogi"])
def test_larger_shogi_variants_play_through_the_hub(variant: str) -> None:
    h = Harness()
    tc = {"kind": "byoyomi", "main_s": 600, "period_s": 30, "periods": 1}
    game_id = start_game(h, variant=variant, tc=tc)
    room = h.hub.room(game_id)
    assert room is not None
    for ply in range(1, 5):
        h.advance(1_000)
        uci = room.game.legal_moves()[0]
        h.send(1 if ply % 2 else 2, "move", game=game_id, ply=ply, move=uci, ack=ply)
        assert one(h.inbox(1 if ply % 2 else 2), "ack").d["ply"] == ply
    records = [p.record.move for p in h.committed if isinstance(p.record, MoveAppended)]
    assert [r.ply for r in records] == [1, 2, 3, 4]
    assert all(r.display for r in records)
    assert records[-2].spent_ms == 1_000 and records[-2].periods_left == 1

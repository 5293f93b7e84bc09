"""Persist tokens are registered where they are issued (since e5d8b32), not found later by
scanning the effects a room returned."""

import pytest
from hub_harness import Harness, player

from server.hub.effects import MoveAppended, Persist
from server.hub.persist_tokens import PersistTokens, WriteKind

TC = {"kind": "fischer", "base_s": 600, "inc_s": 0}


def test_a_token_names_its_game_and_write_from_issue_until_taken() -> None:
    tokens = PersistTokens()
    first, second = tokens.issue("g1", WriteKind.MOVE), tokens.issue("g2", WriteKind.FINISH)
    assert first != second
    assert tokens.get(first) == ("g1", WriteKind.MOVE)
    assert tokens.take(second) == ("g2", WriteKind.FINISH)
    assert tokens.get(second) is None
    with pytest.raises(ValueError):
        tokens.take(second)
    tokens.owe_again(second, ("g2", WriteKind.FINISH))
    assert tokens.take(second) == ("g2", WriteKind.FINISH)


def test_a_move_played_on_a_room_directly_is_owed_to_the_hub_at_once() -> None:
    h = Harness(auto_commit=False)
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    h.send(1, "seek", colour="first", variant="minishogi", tc=TC, rated=False)
    h.send(2, "seek", colour="second", variant="minishogi", tc=TC, rated=False)
    h.commit_all()
    game_id = h.hub.active_game("alice")
    assert game_id is not None
    room = h.hub.room(game_id)
    assert room is not None
    move = room.game.legal_moves()[0]
    (persist,) = room.moves.play(1, room.game.side_to_move, 1, move, h.now, 0, None)
    assert isinstance(persist, Persist) and isinstance(persist.record, MoveAppended)
    # No hub bookkeeping ran: the room's own request registered the token.
    assert h.hub.state.tokens.get(persist.token) == (game_id, WriteKind.MOVE)
    assert h.hub.prepare(persist.token) != ()

"""A correspondence game's turn, told to its players: the ``my_game`` message and the
:class:`~server.hub.effects.TurnChanged` effect.

When a correspondence game (days per move, or no clock) starts, has a move stored or ends, the
hub running it sends each player's connections a ``my_game`` message (one entry of their "your
turn" list, docs/protocol.md) and hands the adapter one ``TurnChanged`` (the e-mail notifier's
cue). Real-time games send neither: their players are at the board, and the move path of a
blitz game pays one ``kind`` test, nothing more.

The same entry is built from the store for games not in memory (``server.store.notify``); both
say whose turn it is by the number of plies (``players[0]`` moves first, the turns alternate).
"""

from __future__ import annotations

from server.hub.effects import Effect, TurnChanged
from server.hub.hub_state import HubState
from server.hub.messages import Message, MessageKind
from server.hub.payloads import SideName
from server.hub.review_payloads import MyGameView
from server.hub.room import GameRoom
from server.rules.time_control import CORRESPONDENCE_KINDS

__all__ = ["my_game_view", "side_to_move", "turn_effects"]

_SIDES: tuple[SideName, SideName] = ("first", "second")


def side_to_move(plies: int) -> SideName:
    """Whose turn it is after ``plies`` moves: the first player's after an even number."""
    return _SIDES[plies % 2]


def my_game_view(room: GameRoom, index: int) -> MyGameView:
    """The "your turn" list's entry of ``room`` for its player ``players[index]``."""
    plies = len(room.records)
    side = _SIDES[index]
    turn = side_to_move(plies)
    finished = room.finished
    return {
        **room.terms.view(),
        "game": room.game_id,
        "opponent": room.players[1 - index].name,
        "side": side,
        "turn": turn,
        "your_turn": not finished and turn == side,
        "plies": plies,
        "finished": finished,
        "result": room.result,
    }


def turn_effects(state: HubState, room: GameRoom) -> list[Effect]:
    """``my_game`` to both players' connections and one ``TurnChanged``, for a correspondence
    game whose start, move or end was just stored; nothing for any other game."""
    if room.terms.control.kind not in CORRESPONDENCE_KINDS:
        return []
    first, second = room.players
    out: list[Effect] = []
    for index, player in enumerate(room.players):
        if not player.computer:
            out += state.send_player(
                player.id, Message(MessageKind.MY_GAME, my_game_view(room, index))
            )
    plies = len(room.records)
    finished = room.finished
    out.append(
        TurnChanged(
            game_id=room.game_id,
            variant=room.terms.variant,
            players=(first.id, second.id),
            names=(first.name, second.name),
            to_move=None if finished else room.players[plies % 2].id,
            plies=plies,
            finished=finished,
            result=room.result,
        )
    )
    return out

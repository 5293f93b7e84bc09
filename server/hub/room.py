"""A game room: one game, its clock, its offers, its members and its versioned event stream.

The room is a plain object driven by the hub: every method takes the current time in
milliseconds and returns effects. Refusals raise :class:`~server.hub.errors.CommandError` *before*
anything changes.

Life cycle: ``created`` (the game row is being written) → ``started`` (after
:meth:`Lifecycle.start`) → ``finished``. The clock starts once both players have made their first
move; until then each first move must arrive within ``first_move_window_ms`` or the game is aborted.

Moves are two-phase. :meth:`Moves.play` checks the move, plays it on the engine, presses the
clock and returns a :class:`~server.hub.effects.Persist`; nobody sees the move yet and the room
refuses state changes (``busy``) until the hub reports the write with :meth:`Moves.persisted`
(event, acks, possible game end) or :meth:`Moves.failed` (engine and clock restored exactly, the
mover told). Takebacks work the same way with a ``MovesRetracted`` record
(:meth:`Offers.takeback_persisted`), and so do endings with a ``GameFinished`` record
(:meth:`Lifecycle.end_persisted` / :meth:`Lifecycle.end_failed`; see
:class:`~server.hub.room_state.PendingEnd` for what a failed write means for a player's ending
and for the server's). Each write's token is taken from the hub's
:class:`~server.hub.persist_tokens.PersistTokens` when the room asks for the write.

A room is its parts, each a field holding the one shared :class:`RoomState`:

* ``state`` (:mod:`server.hub.room_state`): the game, clock, event log, members, offer boxes,
  absences, chat, the write awaited; the views (``summary``, ``snapshot``), event emission,
  joining and leaving, chat lines;
* ``lifecycle`` (:mod:`server.hub.room_lifecycle`): start, restore, presence, what is due at a
  time (flag, first-move timeout, absence countdown), every ending;
* ``moves`` (:mod:`server.hub.room_moves`): a move played, prepared, stored or failed;
* ``offers`` (:mod:`server.hub.room_offers`): draws, takebacks and rematches.

The parts refer to the state and to the lifecycle, never to the room nor to each other
otherwise, so that a finished room is freed by reference counting (no cycle).
"""

from __future__ import annotations

from collections import deque

from server.hub.clock import GameClock
from server.hub.effects import ConnId, GameId
from server.hub.eventlog import Audience, EventLog
from server.hub.identity import PlayerInfo
from server.hub.lobby import GameTerms
from server.hub.payloads import ChatLineView
from server.hub.persist_tokens import PersistTokens
from server.hub.room_lifecycle import Lifecycle
from server.hub.room_moves import Moves
from server.hub.room_offers import Offers
from server.hub.room_state import Absence, RoomSettings, RoomState
from server.rules import Game, MoveList, Side, Variant

__all__ = ["GameRoom", "Lifecycle", "Moves", "Offers", "RoomSettings", "RoomState"]


class GameRoom:
    """See the module docstring. ``players[0]`` moves first.

    Besides its parts, read-only views of the state for the adapters and tests that look at a
    room (the hub itself goes through ``state``)."""

    __slots__ = ("lifecycle", "moves", "offers", "state")

    def __init__(
        self,
        game_id: GameId,
        variant: Variant,
        terms: GameTerms,
        players: tuple[PlayerInfo, PlayerInfo],
        start_fen: str,
        tokens: PersistTokens,
        settings: RoomSettings | None = None,
        *,
        first_version: int = 1,
    ) -> None:
        state = RoomState(
            game_id,
            variant,
            terms,
            players,
            start_fen,
            tokens,
            settings or RoomSettings(),
            first_version,
        )
        self.state = state
        self.lifecycle = Lifecycle(state)
        self.moves = Moves(state, self.lifecycle)
        self.offers = Offers(state, self.lifecycle)

    # ------------------------------------------------------------- views

    @property
    def game_id(self) -> GameId:
        return self.state.game_id

    @property
    def variant(self) -> Variant:
        return self.state.variant

    @property
    def terms(self) -> GameTerms:
        return self.state.terms

    @property
    def players(self) -> tuple[PlayerInfo, PlayerInfo]:
        return self.state.players

    @property
    def start_fen(self) -> str:
        return self.state.start_fen

    @property
    def settings(self) -> RoomSettings:
        return self.state.settings

    @property
    def game(self) -> Game:
        return self.state.game

    @property
    def clock(self) -> GameClock:
        return self.state.clock

    @property
    def log(self) -> EventLog:
        return self.state.log

    @property
    def records(self) -> MoveList:
        """The committed (stored) moves, ply 1 first."""
        return self.state.records

    @property
    def members(self) -> dict[ConnId, Side | None]:
        return self.state.members

    @property
    def absent(self) -> list[Absence | None]:
        return self.state.absent

    @property
    def chat(self) -> dict[Audience, deque[ChatLineView]]:
        return self.state.chat

    @property
    def status(self) -> str:
        return self.state.status

    @property
    def started(self) -> bool:
        return self.state.started

    @property
    def finished(self) -> bool:
        return self.state.finished

    @property
    def busy(self) -> bool:
        return self.state.busy

    @property
    def result(self) -> str | None:
        return self.state.result

    @property
    def termination(self) -> str | None:
        return self.state.termination

    @property
    def winner(self) -> Side | None:
        return self.state.winner

    @property
    def finished_ms(self) -> int | None:
        return self.state.finished_ms

    def side_of(self, player_id: str) -> Side | None:
        return self.state.side_of(player_id)

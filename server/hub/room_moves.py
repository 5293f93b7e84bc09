"""A game room's moves (:class:`Moves`, the room's ``moves`` part): a move played, stored or
refused by the store, and what its commit will show, built while it is being written.

Moves are two-phase (see :mod:`server.hub.room`): :meth:`Moves.play` checks the move, plays it
on the engine, presses the clock and returns a :class:`~server.hub.effects.Persist`; nobody sees
it until :meth:`Moves.persisted` (or :meth:`Moves.failed` undoes it exactly).
"""

from __future__ import annotations

from server.hub.clock import MoveTiming
from server.hub.effects import ConnId, Effect, MoveAppended, Persist, Send
from server.hub.errors import ErrorCode
from server.hub.messages import AckId, MessageKind, ack_message, error_message
from server.hub.payloads import MovePayload
from server.hub.persist_tokens import WriteKind
from server.hub.room_lifecycle import Lifecycle
from server.hub.room_state import Ending, PendingMove, PreparedRelease, RoomState
from server.rules import IllegalMoveError, InvalidMoveError, MoveRecord, Side


class Moves:
    """The moves of one room (see the module docstring); a game ended by a move is finished
    through the room's :class:`~server.hub.room_lifecycle.Lifecycle`."""

    __slots__ = ("lifecycle", "state")

    def __init__(self, state: RoomState, lifecycle: Lifecycle) -> None:
        self.state = state
        self.lifecycle = lifecycle

    def play(
        self,
        conn: ConnId,
        side: Side,
        ply: int,
        uci: str,
        now: int,
        lag_ms: int,
        ack: AckId | None,
    ) -> list[Effect]:
        """Phase one of a move (see the module docstring). Call the lifecycle's ``on_time`` first."""
        state = self.state
        committed = len(state.records)
        if (
            1 <= ply <= committed
            and state.records[ply - 1].uci == uci
            and state.side_of_ply(ply) == side
        ):
            return [Send(conn, ack_message(ack, {"game": state.game_id, "ply": ply}))]
        pending = state.pending
        if isinstance(pending, PendingMove):
            rec = pending.record
            if (rec.ply, rec.uci, pending.side) == (ply, uci, side):
                pending.acks.append((conn, ack))
                return []
        state.require_idle(now)
        if ply != committed + 1:
            raise state.refuse(
                ErrorCode.STALE_MOVE,
                now,
                f"That move was meant for move {ply}, but the game is at move {committed + 1}.",
            )
        if state.game.side_to_move != side:
            raise state.refuse(ErrorCode.NOT_YOUR_TURN, now)
        try:
            played = state.game.play(uci)
        except (InvalidMoveError, IllegalMoveError) as exc:
            # The engine's message already names the move ("a1a5: the king on a1 cannot …").
            raise state.refuse(ErrorCode.ILLEGAL_MOVE, now, f"Illegal move {exc}") from None
        clock_before, abort_before = state.clock.state(), state.abort_at
        timing = self._charge(side, now, lag_ms)
        record = MoveRecord(
            played.ply,
            played.uci,
            played.display,
            timing.main_ms,
            timing.spent_ms,
            timing.periods if state.byoyomi else None,
        )
        token = state.new_token(WriteKind.MOVE)
        state.pending = PendingMove(
            token, record, side, played.gives_check, now, [(conn, ack)], clock_before, abort_before
        )
        return [Persist(token, MoveAppended(state.game_id, record))]

    def _charge(self, side: Side, now: int, lag_ms: int) -> MoveTiming:
        """Press the clock, or (opening moves) arm the next first-move window / start the clock."""
        state = self.state
        if state.clock.running is not None:
            return state.clock.press(now, lag_ms)
        before = state.clock.time(side)
        if state.game.ply >= 2:
            state.clock.start(state.game.side_to_move, now)
            state.abort_at = None
        else:
            state.arm_first_move_window(now)
        return MoveTiming(0, 0, before.main_ms, before.periods)

    def persisted(self, now: int) -> list[Effect]:
        """Phase two, success: the move becomes visible, its acks go out, the game may end."""
        state = self.state
        pending = state.pending
        assert isinstance(pending, PendingMove)
        state.pending = None
        record = pending.record
        state.records.append(record)
        effects: list[Effect]
        release = pending.release
        if release is not None and release.basis == state.release_basis(pending):
            state.log.append_prepared(release.stored)
            effects = list(release.effects)
        else:
            effects = []
            effects += state.cancel_offer("takeback")
            if state.offer_boxes["draw"].pending_from == pending.side.other:
                # Playing on declines the opponent's draw offer.
                effects += state.cancel_offer("draw")
            effects += self._acks(pending)
            effects += state.emit(MessageKind.MOVE, pending.event or self._event(pending))
        outcome = state.game.outcome()
        if outcome is not None:
            ending = Ending(
                outcome.result(), outcome.winner, str(outcome.termination), pending.played_ms
            )
            effects += self.lifecycle.finish(ending)
        else:
            effects += self.lifecycle.on_time(now)
        return effects

    def prepare(self) -> tuple[Effect, ...]:
        """While the pending move is being stored, build what its commit will show: the next
        position's legal moves, the outcome, the move event, and the effects the commit will
        begin with (a :class:`~server.hub.room_state.PreparedRelease`: the acks, then the
        event to the room), which are returned so that the adapter may encode their messages
        ahead too.

        Optional: :meth:`persisted` builds whatever was not prepared, or is no longer
        valid; nothing visible changes either way. Returns ``()`` when nothing is to release
        ahead (no move pending, already prepared, or the commit will first cancel an offer)."""
        state = self.state
        pending = state.pending
        if not isinstance(pending, PendingMove) or pending.release is not None:
            return ()
        if pending.event is None:
            pending.event = self._event(pending)
        if self._cancels_offer(pending):
            return ()
        event, stored = state.log.prepare(MessageKind.MOVE, pending.event)
        effects = (*self._acks(pending), *state.deliver(event))
        pending.release = PreparedRelease(state.release_basis(pending), effects, stored)
        return effects

    def _cancels_offer(self, pending: PendingMove) -> bool:
        """Whether storing ``pending`` cancels an offer first (a takeback offer; the
        opponent's draw offer, which playing on declines)."""
        state = self.state
        return (
            state.offer_boxes["takeback"].pending_from is not None
            or state.offer_boxes["draw"].pending_from == pending.side.other
        )

    def _acks(self, pending: PendingMove) -> list[Effect]:
        ply = pending.record.ply
        return [
            Send(conn, ack_message(ack, {"game": self.state.game_id, "ply": ply}))
            for conn, ack in pending.acks
        ]

    def _event(self, pending: PendingMove) -> MovePayload:
        """The move event's data (with the game's id, as every room event has it)."""
        state = self.state
        record = pending.record
        return {
            "game": state.game_id,
            "ply": record.ply,
            "uci": record.uci,
            "display": record.display,
            "side": pending.side.word,
            "check": pending.gives_check,
            "fen": state.game.fen(),
            "turn": state.game.side_to_move.word,
            "clocks": state.clock.view(pending.played_ms),
            "spent_ms": record.spent_ms,
            "legal": state.game.legal_moves(),
            "draw_claim": state.game.claimable_draw() is not None,
            "first_move_ms": state.first_move_left(pending.played_ms),
        }

    def failed(self, reason: str, now: int) -> list[Effect]:
        """Phase two, failure: undo the move exactly and tell the mover (nobody else saw it)."""
        state = self.state
        pending = state.pending
        assert isinstance(pending, PendingMove)
        state.pending = None
        state.game.undo()
        state.clock.restore(pending.clock_before)
        state.abort_at = pending.abort_before
        message = (
            f"Your move {pending.record.uci} could not be saved ({reason}); "
            "it was taken back, please play it again."
        )
        effects: list[Effect] = [
            Send(
                conn,
                error_message(ErrorCode.MOVE_NOT_SAVED, message, ack, state.summary(now)),
            )
            for conn, ack in pending.acks
        ]
        return effects + self.lifecycle.on_time(now)

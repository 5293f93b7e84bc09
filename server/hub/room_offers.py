"""A game room's offers (:class:`Offers`, the room's ``offers`` part): draws, takebacks and
rematches, each offered, accepted or declined by a side.

A draw agreed ends the game through the room's
:class:`~server.hub.room_lifecycle.Lifecycle`; a takeback agreed is two-phase like a move
(``MovesRetracted``, then :meth:`Offers.takeback_persisted` or :meth:`Offers.takeback_failed`);
a rematch agreed is created by the hub, which then calls :meth:`Offers.rematch_started`.
"""

from __future__ import annotations

from server.hub.effects import ConnId, Effect, GameId, MovesRetracted, Persist, Send
from server.hub.errors import ErrorCode
from server.hub.messages import AckId, MessageKind, ack_message, error_message
from server.hub.persist_tokens import WriteKind
from server.hub.room_lifecycle import Lifecycle
from server.hub.room_state import DRAW, Asker, Ending, PendingTakeback, RoomState
from server.rules import Side, Termination


class Offers:
    """The offers of one room (see the module docstring); the boxes themselves are the state's
    ``offer_boxes``."""

    __slots__ = ("lifecycle", "state")

    def __init__(self, state: RoomState, lifecycle: Lifecycle) -> None:
        self.state = state
        self.lifecycle = lifecycle

    def pending_from(self, kind: str) -> Side | None:
        """The side whose offer of ``kind`` (draw, takeback, rematch) awaits an answer."""
        return self.state.offer_boxes[kind].pending_from

    def draw(self, side: Side, action: str, now: int, asker: Asker) -> list[Effect]:
        """``offer`` / ``accept`` / ``decline`` a draw (variants with ``draw_offers`` only).

        An agreement (accepting, or offering what the opponent offers) ends the game once
        stored; until then the offer stays as it was.
        """
        state = self.state
        state.require_idle(now)
        if not state.variant.draw_offers:
            raise state.refuse(
                ErrorCode.DRAW_OFFERS_UNAVAILABLE, now, f"{state.variant.title} has no draw offers."
            )
        box = state.offer_boxes["draw"]
        if action == "offer":
            box.check_offer(side)
            if box.pending_from is None:
                box.offer(side)
                return state.offer_event("draw", "offer", side)
        elif action == "accept":
            box.check_answer(side)
        if action != "decline":
            ending = Ending(DRAW, None, Termination.AGREEMENT, now, agreed_by=side)
            return self.lifecycle.finish(ending, asker, ErrorCode.DRAW_NOT_SAVED)
        box.decline(side)
        return state.offer_event("draw", "decline", side)

    def takeback(
        self, conn: ConnId, side: Side, action: str, now: int, ack: AckId | None
    ) -> list[Effect]:
        """``offer`` / ``accept`` / ``decline`` a takeback (casual real-time games only).

        Accepting starts a two-phase takeback: the returned Persist must be reported with
        :meth:`takeback_persisted` / :meth:`takeback_failed`; the ack is sent then.
        """
        state = self.state
        state.require_idle(now)
        if state.terms.tournament is not None:
            # as lichess's arena: a takeback would change a result the tournament scores
            raise state.refuse(ErrorCode.TAKEBACK_TOURNAMENT, now)
        if state.terms.rated:
            raise state.refuse(ErrorCode.TAKEBACK_RATED, now)
        if state.correspondence:
            # The turn after a takeback would start at the takeback, which the store does not
            # keep: a restored game would date the turn from the last remaining move.
            raise state.refuse(ErrorCode.TAKEBACK_CORRESPONDENCE, now)
        box = state.offer_boxes["takeback"]
        if action == "decline":
            box.decline(side)
            return state.offer_event("takeback", "decline", side)
        if action == "offer":
            box.check_offer(side)
            moved = any(
                state.side_of_ply(ply) == side for ply in range(1, min(len(state.records), 2) + 1)
            )
            if box.pending_from is None and not moved:
                raise state.refuse(ErrorCode.NO_MOVE_TO_TAKE_BACK, now)
            if not box.offer(side):
                return state.offer_event("takeback", "offer", side)
            proposer = side.other  # the opponent's pending offer met ours: theirs is taken back
        else:
            box.accept(side)
            proposer = side.other
        plies = 2 if state.game.side_to_move == proposer else 1
        plies = min(plies, len(state.records))
        token = state.new_token(WriteKind.TAKEBACK)
        state.pending = PendingTakeback(token, proposer, plies, (conn, ack))
        return [Persist(token, MovesRetracted(state.game_id, len(state.records) - plies + 1))]

    def takeback_persisted(self, now: int) -> list[Effect]:
        state = self.state
        pending = state.pending
        assert isinstance(pending, PendingTakeback)
        state.pending = None
        for _ in range(pending.plies):
            state.game.undo()
            state.records.pop()
        # Time is not refunded: the running side is charged up to now, then the side to move
        # (after the takeback) runs from now.
        state.clock.stop(now)
        if len(state.records) >= 2:
            state.clock.start(state.game.side_to_move, now)
            state.abort_at = None
        else:
            state.arm_first_move_window(now)
        effects: list[Effect] = state.cancel_offer("draw")
        effects += state.offer_event("takeback", "accept", pending.proposer.other)
        effects += state.emit(
            MessageKind.TAKEBACK,
            {
                "ply": len(state.records),
                "removed": pending.plies,
                "fen": state.game.fen(),
                "turn": state.game.side_to_move.word,
                "clocks": state.clock.view(now),
                "legal": state.game.legal_moves(),
                "draw_claim": state.game.claimable_draw() is not None,
                "first_move_ms": state.first_move_left(now),
            },
        )
        conn, ack = pending.ack
        effects.append(Send(conn, ack_message(ack, {"game": state.game_id})))
        return effects + self.lifecycle.on_time(now)

    def takeback_failed(self, reason: str, now: int) -> list[Effect]:
        state = self.state
        pending = state.pending
        assert isinstance(pending, PendingTakeback)
        state.pending = None
        conn, ack = pending.ack
        effects: list[Effect] = [
            Send(
                conn,
                error_message(
                    ErrorCode.TAKEBACK_NOT_SAVED,
                    f"The takeback could not be saved ({reason}); the game goes on.",
                    ack,
                    state.summary(now),
                ),
            )
        ]
        effects += state.emit(
            MessageKind.OFFER,
            {"kind": "takeback", "action": "cancel", "side": pending.proposer.word},
        )
        return effects + self.lifecycle.on_time(now)

    def rematch(self, side: Side, action: str, now: int) -> tuple[bool, list[Effect]]:
        """``offer`` / ``accept`` / ``decline`` a rematch; returns (agreed, effects).

        On agreement the hub creates the new game and calls :meth:`rematch_started`.
        """
        state = self.state
        if state.terms.tournament is not None:
            raise state.refuse(ErrorCode.REMATCH_TOURNAMENT, now)
        if not state.finished:
            raise state.refuse(ErrorCode.GAME_NOT_FINISHED, now)
        box = state.offer_boxes["rematch"]
        if action == "offer":
            if box.offer(side):
                return True, []
            return False, state.offer_event("rematch", "offer", side)
        if action == "accept":
            box.accept(side)
            return True, []
        box.decline(side)
        return False, state.offer_event("rematch", "decline", side)

    def check_rematch(self, side: Side, action: str, now: int) -> None:
        """Raise the refusal :meth:`rematch` would raise, without changing anything."""
        state = self.state
        if state.terms.tournament is not None:
            # the tournament pairs the next game (an arena never pairs last opponents again)
            raise state.refuse(ErrorCode.REMATCH_TOURNAMENT, now)
        if not state.finished:
            raise state.refuse(ErrorCode.GAME_NOT_FINISHED, now)
        box = state.offer_boxes["rematch"]
        if action == "offer":
            box.check_offer(side)
        else:
            box.check_answer(side)

    def rematch_started(self, new_game_id: GameId) -> list[Effect]:
        state = self.state
        state.offer_boxes["rematch"].cancel()
        return state.emit(MessageKind.REMATCH, {"new_game": new_game_id})

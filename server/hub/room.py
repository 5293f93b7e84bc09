"""A game room: one game, its clock, its offers, its members and its versioned event stream.

The room is a plain object driven by the hub: every method takes the current time in
milliseconds and returns effects. Refusals raise :class:`~server.hub.errors.CommandError` *before*
anything changes.

Life cycle: ``created`` (the game row is being written) → ``started`` (after
:meth:`GameRoom.start`) → ``finished``. The clock starts once both players have made their first
move; until then each first move must arrive within ``first_move_window_ms`` or the game is aborted.

Moves are two-phase. :meth:`GameRoom.move` checks the move, plays it on the engine, presses the
clock and returns a :class:`~server.hub.effects.Persist`; nobody sees the move yet and the room
refuses state changes (``busy``) until the hub reports the write with :meth:`move_persisted`
(event, acks, possible game end) or :meth:`move_failed` (engine and clock restored exactly, the
mover told). Takebacks work the same way with a ``MovesRetracted`` record, and so do endings
with a ``GameFinished`` record (:meth:`end_persisted` / :meth:`end_failed`; see
:class:`PendingEnd` for what a failed write means for a player's ending and for the server's).
"""

from __future__ import annotations

from server.hub.clock import MoveTiming
from server.hub.effects import ConnId, Effect, GameId, MoveAppended, MovesRetracted, Persist, Send
from server.hub.errors import ErrorCode
from server.hub.eventlog import Audience
from server.hub.identity import PlayerInfo
from server.hub.messages import AckId, JsonObject, MessageKind, ack_message, error_message
from server.hub.room_lifecycle import RoomLifecycle
from server.hub.room_state import (
    DRAW,
    Absence,
    Asker,
    Ending,
    PendingMove,
    PendingTakeback,
    PreparedRelease,
    RoomSettings,
)
from server.rules import SIDE_NAMES, IllegalMoveError, InvalidMoveError, MoveRecord, Termination

__all__ = ["SIDE_NAMES", "GameRoom", "RoomSettings"]


class GameRoom(RoomLifecycle):
    """See the module docstring. ``players[0]`` moves first."""

    # ---------------------------------------------------------------- moves

    def move(
        self,
        conn: ConnId,
        side: int,
        ply: int,
        uci: str,
        now: int,
        lag_ms: int,
        ack: AckId | None,
    ) -> list[Effect]:
        """Phase one of a move (see the module docstring). Call :meth:`on_time` first."""
        committed = len(self.records)
        if (
            1 <= ply <= committed
            and self.records[ply - 1].uci == uci
            and self._side_of(ply) == side
        ):
            return [Send(conn, ack_message(ack, {"game": self.game_id, "ply": ply}))]
        pending = self._pending
        if isinstance(pending, PendingMove):
            rec = pending.record
            if (rec.ply, rec.uci, pending.side) == (ply, uci, side):
                pending.acks.append((conn, ack))
                return []
        self._require_idle(now)
        if ply != committed + 1:
            raise self._refuse(
                ErrorCode.STALE_MOVE,
                now,
                f"That move was meant for move {ply}, but the game is at move {committed + 1}.",
            )
        if int(self.game.side_to_move) != side:
            raise self._refuse(ErrorCode.NOT_YOUR_TURN, now)
        try:
            played = self.game.play(uci)
        except (InvalidMoveError, IllegalMoveError) as exc:
            # The engine's message already names the move ("a1a5: the king on a1 cannot …").
            raise self._refuse(ErrorCode.ILLEGAL_MOVE, now, f"Illegal move {exc}") from None
        clock_before, abort_before = self.clock.state(), self.abort_at
        timing = self._charge(side, now, lag_ms)
        record = MoveRecord(
            played.ply,
            played.uci,
            played.display,
            timing.main_ms,
            timing.spent_ms,
            timing.periods if self._byoyomi else None,
        )
        token = self.new_token()
        self._pending = PendingMove(
            token, record, side, played.gives_check, now, [(conn, ack)], clock_before, abort_before
        )
        return [Persist(token, MoveAppended(self.game_id, record))]

    def _charge(self, side: int, now: int, lag_ms: int) -> MoveTiming:
        """Press the clock, or (opening moves) arm the next first-move window / start the clock."""
        if self.clock.running is not None:
            return self.clock.press(now, lag_ms)
        before = self.clock.time(side)
        if self.game.ply >= 2:
            self.clock.start(int(self.game.side_to_move), now)
            self.abort_at = None
        else:
            self.abort_at = now + self.settings.first_move_window_ms
        return MoveTiming(0, 0, before.main_ms, before.periods)

    def move_persisted(self, now: int) -> list[Effect]:
        """Phase two, success: the move becomes visible, its acks go out, the game may end."""
        pending = self._pending
        assert isinstance(pending, PendingMove)
        self._pending = None
        record = pending.record
        self.records.append(record)
        effects: list[Effect]
        release = pending.release
        if release is not None and release.basis == self.release_basis(pending):
            self.log.append_prepared(release.stored)
            effects = list(release.effects)
        else:
            effects = []
            effects += self._cancel_offer("takeback")
            if self.offers["draw"].pending_from == 1 - pending.side:
                # Playing on declines the opponent's draw offer.
                effects += self._cancel_offer("draw")
            effects += self._move_acks(pending)
            effects += self._emit(MessageKind.MOVE, pending.event or self._move_event(pending))
        outcome = self.game.outcome()
        if outcome is not None:
            winner = None if outcome.winner is None else int(outcome.winner)
            ending = Ending(outcome.result(), winner, str(outcome.termination), pending.played_ms)
            effects += self._finish(ending)
        else:
            effects += self.on_time(now)
        return effects

    def prepare_move(self) -> tuple[Effect, ...]:
        """While the pending move is being stored, build what its commit will show: the next
        position's legal moves, the outcome, the move event, and the effects the commit will
        begin with (a :class:`~server.hub.room_state.PreparedRelease`: the acks, then the
        event to the room), which are returned so that the adapter may encode their messages
        ahead too.

        Optional: :meth:`move_persisted` builds whatever was not prepared, or is no longer
        valid; nothing visible changes either way. Returns ``()`` when nothing is to release
        ahead (no move pending, already prepared, or the commit will first cancel an offer)."""
        pending = self._pending
        if not isinstance(pending, PendingMove) or pending.release is not None:
            return ()
        if pending.event is None:
            pending.event = self._move_event(pending)
        if self._cancels_offer(pending):
            return ()
        event, stored = self.log.prepare(MessageKind.MOVE, pending.event)
        effects = (*self._move_acks(pending), *self._deliver(event))
        pending.release = PreparedRelease(self.release_basis(pending), effects, stored)
        return effects

    def _cancels_offer(self, pending: PendingMove) -> bool:
        """Whether storing ``pending`` cancels an offer first (a takeback offer; the
        opponent's draw offer, which playing on declines)."""
        return (
            self.offers["takeback"].pending_from is not None
            or self.offers["draw"].pending_from == 1 - pending.side
        )

    def _move_acks(self, pending: PendingMove) -> list[Effect]:
        ply = pending.record.ply
        return [
            Send(conn, ack_message(ack, {"game": self.game_id, "ply": ply}))
            for conn, ack in pending.acks
        ]

    def _move_event(self, pending: PendingMove) -> JsonObject:
        """The move event's data (with the game's id, as every room event has it)."""
        record = pending.record
        return {
            "game": self.game_id,
            "ply": record.ply,
            "uci": record.uci,
            "display": record.display,
            "side": SIDE_NAMES[pending.side],
            "check": pending.gives_check,
            "fen": self.game.fen(),
            "turn": SIDE_NAMES[int(self.game.side_to_move)],
            "clocks": self.clock.view(pending.played_ms),
            "spent_ms": record.spent_ms,
            "legal": self.game.legal_moves(),
            "draw_claim": self.game.claimable_draw() is not None,
        }

    def move_failed(self, reason: str, now: int) -> list[Effect]:
        """Phase two, failure: undo the move exactly and tell the mover (nobody else saw it)."""
        pending = self._pending
        assert isinstance(pending, PendingMove)
        self._pending = None
        self.game.undo()
        self.clock.restore(pending.clock_before)
        self.abort_at = pending.abort_before
        message = (
            f"Your move {pending.record.uci} could not be saved ({reason}); "
            "it was taken back, please play it again."
        )
        effects: list[Effect] = [
            Send(
                conn,
                error_message(ErrorCode.MOVE_NOT_SAVED, message, ack, {"state": self.state(now)}),
            )
            for conn, ack in pending.acks
        ]
        return effects + self.on_time(now)

    # --------------------------------------------------------------- offers

    def draw_offer(self, side: int, action: str, now: int, asker: Asker) -> list[Effect]:
        """``offer`` / ``accept`` / ``decline`` a draw (variants with ``draw_offers`` only).

        An agreement (accepting, or offering what the opponent offers) ends the game once
        stored; until then the offer stays as it was.
        """
        self._require_idle(now)
        if not self.variant.draw_offers:
            raise self._refuse(
                ErrorCode.DRAW_OFFERS_UNAVAILABLE, now, f"{self.variant.title} has no draw offers."
            )
        box = self.offers["draw"]
        if action == "offer":
            box.check_offer(side)
            if box.pending_from is None:
                box.offer(side)
                return self._offer_event("draw", "offer", side)
        elif action == "accept":
            box.check_answer(side)
        if action != "decline":
            ending = Ending(DRAW, None, Termination.AGREEMENT, now, agreed_by=side)
            return self._finish(ending, asker, ErrorCode.DRAW_NOT_SAVED)
        box.decline(side)
        return self._offer_event("draw", "decline", side)

    def takeback_offer(
        self, conn: ConnId, side: int, action: str, now: int, ack: AckId | None
    ) -> list[Effect]:
        """``offer`` / ``accept`` / ``decline`` a takeback (casual games only).

        Accepting starts a two-phase takeback: the returned Persist must be reported with
        :meth:`takeback_persisted` / :meth:`takeback_failed`; the ack is sent then.
        """
        self._require_idle(now)
        if self.terms.rated:
            raise self._refuse(ErrorCode.TAKEBACK_RATED, now)
        box = self.offers["takeback"]
        if action == "decline":
            box.decline(side)
            return self._offer_event("takeback", "decline", side)
        if action == "offer":
            box.check_offer(side)
            moved = any(
                self._side_of(ply) == side for ply in range(1, min(len(self.records), 2) + 1)
            )
            if box.pending_from is None and not moved:
                raise self._refuse(ErrorCode.NO_MOVE_TO_TAKE_BACK, now)
            if not box.offer(side):
                return self._offer_event("takeback", "offer", side)
            proposer = 1 - side  # the opponent's pending offer met ours: theirs is taken back
        else:
            box.accept(side)
            proposer = 1 - side
        plies = 2 if int(self.game.side_to_move) == proposer else 1
        plies = min(plies, len(self.records))
        token = self.new_token()
        self._pending = PendingTakeback(token, proposer, plies, (conn, ack))
        return [Persist(token, MovesRetracted(self.game_id, len(self.records) - plies + 1))]

    def takeback_persisted(self, now: int) -> list[Effect]:
        pending = self._pending
        assert isinstance(pending, PendingTakeback)
        self._pending = None
        for _ in range(pending.plies):
            self.game.undo()
            self.records.pop()
        # Time is not refunded: the running side is charged up to now, then the side to move
        # (after the takeback) runs from now.
        self.clock.stop(now)
        if len(self.records) >= 2:
            self.clock.start(int(self.game.side_to_move), now)
            self.abort_at = None
        else:
            self.abort_at = now + self.settings.first_move_window_ms
        effects: list[Effect] = self._cancel_offer("draw")
        effects += self._offer_event("takeback", "accept", 1 - pending.proposer)
        effects += self._emit(
            MessageKind.TAKEBACK,
            {
                "ply": len(self.records),
                "removed": pending.plies,
                "fen": self.game.fen(),
                "turn": SIDE_NAMES[int(self.game.side_to_move)],
                "clocks": self.clock.view(now),
                "legal": self.game.legal_moves(),
                "draw_claim": self.game.claimable_draw() is not None,
            },
        )
        conn, ack = pending.ack
        effects.append(Send(conn, ack_message(ack, {"game": self.game_id})))
        return effects + self.on_time(now)

    def takeback_failed(self, reason: str, now: int) -> list[Effect]:
        pending = self._pending
        assert isinstance(pending, PendingTakeback)
        self._pending = None
        conn, ack = pending.ack
        effects: list[Effect] = [
            Send(
                conn,
                error_message(
                    ErrorCode.TAKEBACK_NOT_SAVED,
                    f"The takeback could not be saved ({reason}); the game goes on.",
                    ack,
                    {"state": self.state(now)},
                ),
            )
        ]
        effects += self._emit(
            MessageKind.OFFER,
            {"kind": "takeback", "action": "cancel", "side": SIDE_NAMES[pending.proposer]},
        )
        return effects + self.on_time(now)

    def rematch_offer(self, side: int, action: str, now: int) -> tuple[bool, list[Effect]]:
        """``offer`` / ``accept`` / ``decline`` a rematch; returns (agreed, effects).

        On agreement the hub creates the new game and calls :meth:`rematch_started`.
        """
        if not self.finished:
            raise self._refuse(ErrorCode.GAME_NOT_FINISHED, now)
        box = self.offers["rematch"]
        if action == "offer":
            if box.offer(side):
                return True, []
            return False, self._offer_event("rematch", "offer", side)
        if action == "accept":
            box.accept(side)
            return True, []
        box.decline(side)
        return False, self._offer_event("rematch", "decline", side)

    def check_rematch(self, side: int, action: str, now: int) -> None:
        """Raise the refusal :meth:`rematch_offer` would raise, without changing anything."""
        if not self.finished:
            raise self._refuse(ErrorCode.GAME_NOT_FINISHED, now)
        box = self.offers["rematch"]
        if action == "offer":
            box.check_offer(side)
        else:
            box.check_answer(side)

    def rematch_started(self, new_game_id: GameId) -> list[Effect]:
        self.offers["rematch"].cancel()
        return self._emit(MessageKind.REMATCH, {"new_game": new_game_id})

    # ----------------------------------------------------------- presence

    def presence(self, side: int, present: bool, now: int) -> list[Effect]:
        """A player's last connection went away (``present`` False) or one came back."""
        if present:
            if self.absent[side] is None:
                return []
            self.absent[side] = None
            if self.finished:
                return []
            return self._emit(MessageKind.BACK, {"side": SIDE_NAMES[side]})
        if self.absent[side] is not None or self.finished:
            return []
        absence = Absence(now)
        self.absent[side] = absence
        return self._emit(
            MessageKind.GONE,
            {
                "side": SIDE_NAMES[side],
                "claimable": False,
                "claim_in_ms": self._claim_at(absence) - now,
            },
        )

    # ----------------------------------------------------------------- chat

    def chat_line(self, side: int | None, author: PlayerInfo, text: str) -> list[Effect]:
        """Players write to the players' chat, everyone else to the spectators' chat."""
        audience = Audience.SPECTATORS if side is None else Audience.PLAYERS
        line: JsonObject = {
            "room": audience.value,
            "user": author.name,
            "user_id": author.id,
            "text": text,
        }
        self.chat[audience].append(line)
        return self._emit(MessageKind.CHAT, line, audience)

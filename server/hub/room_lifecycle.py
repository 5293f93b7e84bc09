"""A game room's life cycle (:class:`Lifecycle`, the room's ``lifecycle`` part): start,
restore after a restart, the players' presence, time running out, and endings.

Every ending is two-phase (see :mod:`server.hub.room`): :meth:`Lifecycle.finish` asks for
the ``GameFinished`` record and the game is over for everyone only in
:meth:`Lifecycle.end_persisted`.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.hub.bus_notices import GameEndNotice
from server.hub.effects import BerserkMarked, Effect, GameFinished, Persist, Publish, Send
from server.hub.errors import ErrorCode
from server.hub.messages import Message, MessageKind, ack_message, error_message
from server.hub.payloads import EndPayload
from server.hub.persist_tokens import WriteKind
from server.hub.room_state import (
    DRAW,
    RESULTS,
    Absence,
    Asker,
    Ending,
    PendingBerserk,
    PendingEnd,
    RoomState,
)
from server.hub.tournament.arena import berserk_control
from server.hub.tournament_payloads import BerserkPayload
from server.rules import (
    SIDES,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    MoveRecord,
    Side,
    Termination,
    has_mating_material,
)
from server.rules.time_control import SideTime


class Lifecycle:
    """Starting, restoring, presence, time running out and endings of one room (see the
    module docstring)."""

    __slots__ = ("state",)

    def __init__(self, state: RoomState) -> None:
        self.state = state

    # ----------------------------------------------------------- lifecycle

    def start(self, now: int) -> None:
        """The game row is stored: the game begins and the first move is awaited."""
        state = self.state
        state.status = "started"
        state.arm_first_move_window(now)

    def restore(
        self,
        moves: Sequence[MoveRecord],
        now: int,
        turn_started: int | None = None,
        berserk: tuple[bool, bool] = (False, False),
    ) -> list[Effect]:
        """Rebuild a stored, unfinished game and resume it at ``now``.

        Each side's clock gets the time stored with its last move; the side to move starts
        thinking at ``now`` (time while no server ran the game is not charged). Before both
        players have moved, the first-move window restarts instead.

        A correspondence game's deadline is absolute: the side to move's turn started at
        ``turn_started`` (hub time, usually in the past: the instant of the last stored move,
        or of the game's start; ``now`` if not given), so the downtime is charged. A turn
        already over ends the game at once (lost on time, or aborted before both players
        moved), at its deadline.

        ``berserk``: who berserked (stored with the game): their clock follows the berserk
        control again (a side that has not moved yet starts from its halved time).

        :raises ValueError: a stored move is not legal or out of sequence (corrupt record);
            nothing is kept.
        """
        state = self.state
        if state.status != "created" or state.records:
            raise ValueError("only a new room can be restored")
        if [move.ply for move in moves] != list(range(1, len(moves) + 1)):
            raise ValueError(f"game {state.game_id}: the stored moves are not numbered 1, 2, ...")
        try:
            for stored in moves:
                state.game.play(stored.uci)
                state.records.append(stored)
        except (InvalidMoveError, IllegalMoveError) as exc:
            state.game = Game(state.variant, state.start_fen)
            state.records.clear()
            raise ValueError(f"game {state.game_id}: stored move {stored.uci!r}: {exc}") from exc
        halved = berserk_control(state.terms.control)
        for side in SIDES:
            if berserk[side] and halved is not None:
                state.berserk[side] = True
                state.clock.berserk(side, halved)
        for record in state.records[-2:]:
            time = SideTime(record.clock_ms, record.periods_left or 0)
            state.clock.set_time(state.side_of_ply(record.ply), time)
        state.status = "started"
        outcome = state.game.outcome()
        if outcome is not None:
            ending = Ending(outcome.result(), outcome.winner, str(outcome.termination), now)
            return self.finish(ending)
        if state.correspondence:
            state.clock.start(state.game.side_to_move, now if turn_started is None else turn_started)
            return self.flag() if state.clock.out_of_time(now) else []
        if len(state.records) >= 2:
            state.clock.start(state.game.side_to_move, now)
        else:
            state.arm_first_move_window(now)
        return []

    def on_time(self, now: int) -> list[Effect]:
        """Fire whatever is due at ``now``: flag, automatic abort, end of an absence countdown."""
        state = self.state
        if state.status != "started" or state.pending is not None:
            return []
        if state.clock.out_of_time(now):
            return self.flag()
        if state.abort_at is not None and now >= state.abort_at:
            return self.finish(Ending(None, None, Termination.ABORT, now, detail="no_first_move"))
        effects: list[Effect] = []
        for side, absence in zip(SIDES, state.absent):
            if absence is not None and not absence.claimable and now >= state.claim_at(absence):
                absence.claimable = True
                effects += state.emit(MessageKind.GONE, {"side": side.word, "claimable": True})
        return effects

    def flag(self) -> list[Effect]:
        """The running side's time ran out: it lost (drawn if the winner cannot mate), at the
        deadline. A correspondence game whose first two moves are not both made yet is aborted
        instead (as lichess: whichever first move is missing)."""
        state = self.state
        loser, fell_at = state.clock.running, state.clock.deadline()
        assert loser is not None and fell_at is not None
        if state.correspondence and len(state.records) < 2:
            return self.finish(
                Ending(None, None, Termination.ABORT, fell_at, detail="no_first_move")
            )
        winner = loser.other
        if not self.can_win_on_time(winner):
            return self.finish(Ending(DRAW, None, Termination.TIME, fell_at, flagged=True))
        return self.finish(Ending(RESULTS[winner], winner, Termination.TIME, fell_at, flagged=True))

    def can_win_on_time(self, winner: Side) -> bool:
        """Chess family: on time-out the game is drawn if the winner has no mating material
        (the engine judges it from the committed position)."""
        state = self.state
        if state.variant.family != "chess":
            return True
        return has_mating_material(state.game.position, winner)

    def finish(
        self, ending: Ending, asker: Asker | None = None, refusal: ErrorCode | None = None
    ) -> list[Effect]:
        """Phase one of the game's end: ask for its record; nothing changes until it is stored.

        ``asker`` is the player whose command ends the game (its ack waits for the write and a
        failure is reported to it as ``refusal``); ``None`` when the server decided the end.
        """
        state = self.state
        token = state.new_token(WriteKind.FINISH)
        state.pending = PendingEnd(token, ending, asker, refusal)
        record = GameFinished(
            game_id=state.game_id,
            variant=state.variant.name,
            rated=state.terms.rated,
            first_id=state.players[Side.FIRST].id,
            second_id=state.players[Side.SECOND].id,
            result=ending.result,
            termination=ending.termination,
            plies=len(state.records),
            final_fen=state.committed_fen(),
            ended_ms=ending.at_ms,
            server_decided=asker is None,
            tournament=state.terms.tournament,
            berserk=(state.berserk[0], state.berserk[1]),
        )
        return [Persist(token, record)]

    def end_persisted(self, now: int) -> list[Effect]:
        """Phase two of the end, success: the game is over for everyone, the asker is acked."""
        state = self.state
        pending = state.pending
        assert isinstance(pending, PendingEnd)
        state.pending = None
        ending = pending.ending
        if ending.flagged:
            state.clock.flag()
        else:
            state.clock.stop(ending.at_ms)
        effects: list[Effect] = []
        if ending.agreed_by is not None:
            state.offer_boxes["draw"].cancel()
            effects += state.offer_event("draw", "accept", ending.agreed_by)
        state.status = "finished"
        state.result, state.winner, state.termination = (
            ending.result,
            ending.winner,
            ending.termination,
        )
        state.detail = ending.detail
        state.finished_ms = ending.at_ms
        state.abort_at = None
        state.absent = [None, None]
        for kind in ("draw", "takeback"):
            effects += state.cancel_offer(kind)
        data: EndPayload = {
            "game": state.game_id,
            "result": ending.result,
            "winner": state.winner_name(),
            "termination": ending.termination,
            "clocks": state.clock.view(ending.at_ms),
        }
        if ending.detail is not None:
            data["detail"] = ending.detail
        effects += state.emit(MessageKind.END, data)
        if pending.asker is not None:
            conn, ack = pending.asker
            effects.append(Send(conn, ack_message(ack, {"game": state.game_id})))
        effects.append(
            Publish(
                "games",
                Message(
                    MessageKind.GAME_END,
                    GameEndNotice(
                        game=state.game_id,
                        result=ending.result,
                        termination=ending.termination,
                    ),
                ),
            )
        )
        return effects

    def end_failed(self, reason: str, now: int) -> list[Effect]:
        """Phase two of the end, failure. A player's ending is dropped (the game goes on, the
        player is told); the server's cannot be taken back and stays pending (the adapter
        writes it until stored, see :class:`PendingEnd`)."""
        state = self.state
        pending = state.pending
        assert isinstance(pending, PendingEnd)
        if pending.asker is None:
            return []
        state.pending = None
        conn, ack = pending.asker
        assert pending.refusal is not None, "a player's ending carries its refusal"
        message = f"That could not be saved ({reason}); nothing changed, the game goes on."
        effects: list[Effect] = [
            Send(conn, error_message(pending.refusal, message, ack, state.summary(now)))
        ]
        return effects + self.on_time(now)

    # ----------------------------------------------------------- presence

    def presence(self, side: Side, present: bool, now: int) -> list[Effect]:
        """A player's last connection went away (``present`` False) or one came back. Nothing
        in a correspondence game: absence does not matter there."""
        state = self.state
        if state.correspondence:
            return []
        if present:
            if state.absent[side] is None:
                return []
            state.absent[side] = None
            if state.finished:
                return []
            return state.emit(MessageKind.BACK, {"side": side.word})
        if state.absent[side] is not None or state.finished:
            return []
        absence = Absence(now)
        state.absent[side] = absence
        return state.emit(
            MessageKind.GONE,
            {
                "side": side.word,
                "claimable": False,
                "claim_in_ms": state.claim_at(absence) - now,
            },
        )

    # ------------------------------------------------------------- endings

    # A player's ending is written before anyone hears of it (the asker's ack included); if the
    # write fails the player gets the ``*_not_saved`` refusal and nothing changed.

    def resign(self, side: Side, now: int, asker: Asker) -> list[Effect]:
        self.state.require_idle(now)
        ending = Ending(RESULTS[side.other], side.other, Termination.RESIGNATION, now)
        return self.finish(ending, asker, ErrorCode.RESIGN_NOT_SAVED)

    def abort(self, side: Side, now: int, asker: Asker) -> list[Effect]:
        state = self.state
        state.require_idle(now)
        if len(state.records) >= 2:
            raise state.refuse(ErrorCode.ABORT_TOO_LATE, now)
        if state.terms.tournament is not None:
            # Not moving in time loses a tournament game (the first-move window); a player
            # may not end one without a result.
            raise state.refuse(ErrorCode.ABORT_TOO_LATE, now, "A tournament game cannot be aborted.")
        ending = Ending(None, None, Termination.ABORT, now, detail=f"{side.word}_aborted")
        return self.finish(ending, asker, ErrorCode.ABORT_NOT_SAVED)

    def berserk(self, side: Side, now: int, asker: Asker) -> list[Effect]:
        """Phase one of a berserk: ``side`` halves its own clock before its first move (a
        tournament game that allows it; once). Stored first (``BerserkMarked``: a resumed game
        keeps it), then applied by :meth:`berserk_persisted`."""
        state = self.state
        state.require_idle(now)
        tag = state.terms.tournament
        moved = sum(1 for ply in range(1, len(state.records) + 1) if state.side_of_ply(ply) == side)
        halved = berserk_control(state.terms.control)
        if tag is None or not tag.berserk or moved or state.berserk[side] or halved is None:
            raise state.refuse(ErrorCode.NOT_BERSERKABLE, now)
        token = state.new_token(WriteKind.BERSERK)
        state.pending = PendingBerserk(token, side, asker)
        marks = [state.berserk[0], state.berserk[1]]
        marks[side] = True
        return [Persist(token, BerserkMarked(state.game_id, marks[0], marks[1]))]

    def berserk_persisted(self, now: int) -> list[Effect]:
        """Phase two, stored: the side's clock follows the berserk control from now on
        (``arena.berserk_control``: half the base and no increment; byoyomi: half the main
        time, the periods kept). Everyone is told (``berserk``), the asker acked."""
        state = self.state
        pending = state.pending
        assert isinstance(pending, PendingBerserk)
        state.pending = None
        halved = berserk_control(state.terms.control)
        assert halved is not None  # checked in phase one; the terms never change
        state.berserk[pending.side] = True
        state.clock.berserk(pending.side, halved)
        data: BerserkPayload = {
            "game": state.game_id,
            "side": pending.side.word,
            "clocks": state.clock.view(now),
        }
        conn, ack = pending.asker
        effects = [*state.emit(MessageKind.BERSERK, data)]
        effects.append(Send(conn, ack_message(ack, {"game": state.game_id})))
        return effects + self.on_time(now)

    def berserk_failed(self, reason: str, now: int) -> list[Effect]:
        """Phase two, not stored: nothing changed; the asker is told."""
        state = self.state
        pending = state.pending
        assert isinstance(pending, PendingBerserk)
        state.pending = None
        conn, ack = pending.asker
        message = f"That could not be saved ({reason}); nothing changed."
        refusal = error_message(ErrorCode.BERSERK_NOT_SAVED, message, ack, state.summary(now))
        return [Send(conn, refusal), *self.on_time(now)]

    def claim_draw(self, side: Side, now: int, asker: Asker) -> list[Effect]:
        state = self.state
        state.require_idle(now)
        if state.game.side_to_move != side:
            raise state.refuse(
                ErrorCode.NOT_YOUR_TURN, now, "Only the player to move may claim a draw."
            )
        claim = state.game.claimable_draw()
        if claim is None:
            raise state.refuse(ErrorCode.NO_DRAW_CLAIM, now)
        return self.finish(Ending(DRAW, None, str(claim), now), asker, ErrorCode.DRAW_NOT_SAVED)

    def abandon_claim(self, side: Side, outcome: str, now: int, asker: Asker) -> list[Effect]:
        state = self.state
        state.require_idle(now)
        if state.correspondence:
            raise state.refuse(
                ErrorCode.OPPONENT_PRESENT,
                now,
                "In a correspondence game your opponent has until the deadline to move.",
            )
        absence = state.absent[side.other]
        if absence is None:
            raise state.refuse(ErrorCode.OPPONENT_PRESENT, now)
        if not absence.claimable:
            wait_s = (state.claim_at(absence) - now + 999) // 1000
            raise state.refuse(
                ErrorCode.TOO_EARLY,
                now,
                f"Your opponent may still come back; wait {wait_s} s more.",
            )
        if len(state.records) < 2:
            raise state.refuse(ErrorCode.ABORT_INSTEAD, now)
        if outcome == "draw":
            ending = Ending(DRAW, None, Termination.ABANDONMENT, now)
        else:
            ending = Ending(RESULTS[side], side, Termination.ABANDONMENT, now)
        return self.finish(ending, asker, ErrorCode.ABANDON_NOT_SAVED)

"""A game room's life cycle: start, restore after a restart, time running out, and endings.

Every ending is two-phase (see :mod:`server.hub.room`): :meth:`RoomLifecycle._finish` asks for
the ``GameFinished`` record and the game is over for everyone only in
:meth:`RoomLifecycle.end_persisted`.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.hub.clock import SideTime
from server.hub.effects import Effect, GameFinished, Persist, Publish, Send
from server.hub.errors import ErrorCode
from server.hub.messages import JsonObject, Message, MessageKind, ack_message, error_message
from server.hub.room_state import DRAW, RESULTS, Asker, Ending, PendingEnd, RoomState
from server.rules import (
    SIDE_NAMES,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    MoveRecord,
    Termination,
    has_mating_material,
)


class RoomLifecycle(RoomState):
    """Starting, restoring and ending a game (see the module docstring)."""

    # ----------------------------------------------------------- lifecycle

    def start(self, now: int) -> None:
        """The game row is stored: the game begins and the first move is awaited."""
        self.status = "started"
        self.abort_at = now + self.settings.first_move_window_ms

    def restore(self, moves: Sequence[MoveRecord], now: int) -> list[Effect]:
        """Rebuild a stored, unfinished game and resume it at ``now``.

        Each side's clock gets the time stored with its last move; the side to move starts
        thinking at ``now`` (time while no server ran the game is not charged). Before both
        players have moved, the first-move window restarts instead.

        :raises ValueError: a stored move is not legal or out of sequence (corrupt record);
            nothing is kept.
        """
        if self.status != "created" or self.records:
            raise ValueError("only a new room can be restored")
        if [move.ply for move in moves] != list(range(1, len(moves) + 1)):
            raise ValueError(f"game {self.game_id}: the stored moves are not numbered 1, 2, ...")
        try:
            for stored in moves:
                self.game.play(stored.uci)
                self.records.append(stored)
        except (InvalidMoveError, IllegalMoveError) as exc:
            self.game = Game(self.variant, self.start_fen)
            self.records.clear()
            raise ValueError(f"game {self.game_id}: stored move {stored.uci!r}: {exc}") from exc
        for record in self.records[-2:]:
            time = SideTime(record.clock_ms, record.periods_left or 0)
            self.clock.set_time(self._side_of(record.ply), time)
        self.status = "started"
        outcome = self.game.outcome()
        if outcome is not None:
            winner = None if outcome.winner is None else int(outcome.winner)
            return self._finish(Ending(outcome.result(), winner, str(outcome.termination), now))
        if len(self.records) >= 2:
            self.clock.start(int(self.game.side_to_move), now)
        else:
            self.abort_at = now + self.settings.first_move_window_ms
        return []

    def on_time(self, now: int) -> list[Effect]:
        """Fire whatever is due at ``now``: flag, automatic abort, end of an absence countdown."""
        if self.status != "started" or self._pending is not None:
            return []
        if self.clock.out_of_time(now):
            return self._flag(now)
        if self.abort_at is not None and now >= self.abort_at:
            return self._finish(Ending(None, None, Termination.ABORT, now, detail="no_first_move"))
        effects: list[Effect] = []
        for side, absence in enumerate(self.absent):
            if absence is not None and not absence.claimable and now >= self._claim_at(absence):
                absence.claimable = True
                effects += self._emit(
                    MessageKind.GONE, {"side": SIDE_NAMES[side], "claimable": True}
                )
        return effects

    def _flag(self, now: int) -> list[Effect]:
        loser, fell_at = self.clock.running, self.clock.deadline()
        assert loser is not None and fell_at is not None
        winner = 1 - loser
        if not self._can_win_on_time(winner):
            return self._finish(Ending(DRAW, None, Termination.TIME, fell_at, flagged=True))
        return self._finish(
            Ending(RESULTS[winner], winner, Termination.TIME, fell_at, flagged=True)
        )

    def _can_win_on_time(self, winner: int) -> bool:
        """Chess family: on time-out the game is drawn if the winner has no mating material
        (the engine judges it from the committed position)."""
        if self.variant.family != "chess":
            return True
        return has_mating_material(self.game.position, winner)

    def _finish(
        self, ending: Ending, asker: Asker | None = None, refusal: ErrorCode | None = None
    ) -> list[Effect]:
        """Phase one of the game's end: ask for its record; nothing changes until it is stored.

        ``asker`` is the player whose command ends the game (its ack waits for the write and a
        failure is reported to it as ``refusal``); ``None`` when the server decided the end.
        """
        token = self.new_token()
        self._pending = PendingEnd(token, ending, asker, refusal)
        record = GameFinished(
            game_id=self.game_id,
            variant=self.variant.name,
            rated=self.terms.rated,
            first_id=self.players[0].id,
            second_id=self.players[1].id,
            result=ending.result,
            termination=ending.termination,
            plies=len(self.records),
            final_fen=self._committed_fen(),
            ended_ms=ending.at_ms,
            server_decided=asker is None,
        )
        return [Persist(token, record)]

    def end_persisted(self, now: int) -> list[Effect]:
        """Phase two of the end, success: the game is over for everyone, the asker is acked."""
        pending = self._pending
        assert isinstance(pending, PendingEnd)
        self._pending = None
        ending = pending.ending
        if ending.flagged:
            self.clock.flag()
        else:
            self.clock.stop(ending.at_ms)
        effects: list[Effect] = []
        if ending.agreed_by is not None:
            self.offers["draw"].cancel()
            effects += self._offer_event("draw", "accept", ending.agreed_by)
        self.status = "finished"
        self.result, self.winner, self.termination = (
            ending.result,
            ending.winner,
            ending.termination,
        )
        self.detail = ending.detail
        self.finished_ms = ending.at_ms
        self.abort_at = None
        self.absent = [None, None]
        for kind in ("draw", "takeback"):
            effects += self._cancel_offer(kind)
        data: JsonObject = {
            "result": ending.result,
            "winner": self._winner_name(),
            "termination": ending.termination,
            "clocks": self.clock.view(ending.at_ms),
        }
        if ending.detail is not None:
            data["detail"] = ending.detail
        effects += self._emit(MessageKind.END, data)
        if pending.asker is not None:
            conn, ack = pending.asker
            effects.append(Send(conn, ack_message(ack, {"game": self.game_id})))
        effects.append(
            Publish(
                "games",
                Message(
                    MessageKind.GAME_END,
                    {
                        "game": self.game_id,
                        "result": ending.result,
                        "termination": ending.termination,
                    },
                ),
            )
        )
        return effects

    def end_failed(self, reason: str, now: int) -> list[Effect]:
        """Phase two of the end, failure. A player's ending is dropped (the game goes on, the
        player is told); the server's cannot be taken back and stays pending (the adapter
        writes it until stored, see :class:`PendingEnd`)."""
        pending = self._pending
        assert isinstance(pending, PendingEnd)
        if pending.asker is None:
            return []
        self._pending = None
        conn, ack = pending.asker
        assert pending.refusal is not None, "a player's ending carries its refusal"
        message = f"That could not be saved ({reason}); nothing changed, the game goes on."
        effects: list[Effect] = [
            Send(conn, error_message(pending.refusal, message, ack, {"state": self.state(now)}))
        ]
        return effects + self.on_time(now)

    # ------------------------------------------------------------- endings

    # A player's ending is written before anyone hears of it (the asker's ack included); if the
    # write fails the player gets the ``*_not_saved`` refusal and nothing changed.

    def resign(self, side: int, now: int, asker: Asker) -> list[Effect]:
        self._require_idle(now)
        ending = Ending(RESULTS[1 - side], 1 - side, Termination.RESIGNATION, now)
        return self._finish(ending, asker, ErrorCode.RESIGN_NOT_SAVED)

    def abort(self, side: int, now: int, asker: Asker) -> list[Effect]:
        self._require_idle(now)
        if len(self.records) >= 2:
            raise self._refuse(ErrorCode.ABORT_TOO_LATE, now)
        ending = Ending(None, None, Termination.ABORT, now, detail=f"{SIDE_NAMES[side]}_aborted")
        return self._finish(ending, asker, ErrorCode.ABORT_NOT_SAVED)

    def claim_draw(self, side: int, now: int, asker: Asker) -> list[Effect]:
        self._require_idle(now)
        if int(self.game.side_to_move) != side:
            raise self._refuse(
                ErrorCode.NOT_YOUR_TURN, now, "Only the player to move may claim a draw."
            )
        claim = self.game.claimable_draw()
        if claim is None:
            raise self._refuse(ErrorCode.NO_DRAW_CLAIM, now)
        return self._finish(Ending(DRAW, None, str(claim), now), asker, ErrorCode.DRAW_NOT_SAVED)

    def abandon_claim(self, side: int, outcome: str, now: int, asker: Asker) -> list[Effect]:
        self._require_idle(now)
        absence = self.absent[1 - side]
        if absence is None:
            raise self._refuse(ErrorCode.OPPONENT_PRESENT, now)
        if not absence.claimable:
            wait_s = (self._claim_at(absence) - now + 999) // 1000
            raise self._refuse(
                ErrorCode.TOO_EARLY,
                now,
                f"Your opponent may still come back; wait {wait_s} s more.",
            )
        if len(self.records) < 2:
            raise self._refuse(ErrorCode.ABORT_INSTEAD, now)
        if outcome == "draw":
            ending = Ending(DRAW, None, Termination.ABANDONMENT, now)
        else:
            ending = Ending(RESULTS[side], side, Termination.ABANDONMENT, now)
        return self._finish(ending, asker, ErrorCode.ABANDON_NOT_SAVED)

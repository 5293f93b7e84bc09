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
:class:`_PendingEnd` for what a failed write means for a player's ending and for the server's).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from server.hub.clock import Byoyomi, ClockState, GameClock, MoveTiming, SideTime
from server.hub.effects import (
    Broadcast,
    ConnId,
    Effect,
    GameFinished,
    GameId,
    MoveAppended,
    MovesRetracted,
    Persist,
    Publish,
    Send,
)
from server.hub.errors import CommandError
from server.hub.eventlog import Audience, EventLog
from server.hub.identity import PlayerInfo
from server.hub.lobby import GameTerms
from server.hub.messages import AckId, JsonObject, Message, ack_message, error_message
from server.hub.offers import OfferBox
from server.rules import (
    Game,
    IllegalMoveError,
    InvalidMoveError,
    MoveRecord,
    Variant,
    has_mating_material,
)

SIDE_NAMES = ("first", "second")
RESULTS = ("1-0", "0-1")
DRAW = "1/2-1/2"


@dataclass(frozen=True)
class RoomSettings:
    """Tunables of every room (the hub's :class:`~server.hub.hub.HubConfig` fills them)."""

    first_move_window_ms: int = 30_000
    event_log_capacity: int = 200
    chat_history: int = 50
    abandon_min_ms: int = 30_000
    abandon_max_ms: int = 180_000
    abandon_fraction: float = 0.1
    """Abandonment countdown = this fraction of the estimated game length, clamped to min/max."""


@dataclass
class _PendingMove:
    """A move played on the engine and the clock, waiting for its record to be stored."""

    token: int
    record: MoveRecord
    side: int
    gives_check: bool
    played_ms: int
    acks: list[tuple[ConnId, AckId | None]]
    clock_before: ClockState
    abort_before: int | None


@dataclass
class _PendingTakeback:
    token: int
    proposer: int
    plies: int
    ack: tuple[ConnId, AckId | None]


Asker = tuple[ConnId, AckId | None]
"""The connection whose command is being answered, and the command's ack id."""


@dataclass(frozen=True)
class _Ending:
    """How a game ends, decided at ``at_ms`` but applied only once it is stored."""

    result: str | None
    winner: int | None
    termination: str
    at_ms: int
    detail: str | None = None
    flagged: bool = False
    """The side to move lost on time: its clock goes to zero."""
    agreed_by: int | None = None
    """The side whose acceptance made a draw agreement (its ``offer`` event goes first)."""


@dataclass
class _PendingEnd:
    """A game end waiting for its write.

    ``asker`` is the player whose command ends the game (resignation, agreement, claim, abort):
    a failed write is reported to it with ``refusal`` and the game goes on. Without an asker the
    server decided (time, first-move timeout, an engine outcome): that cannot be taken back, so
    the adapter writes it until stored and the room refuses everything with ``game_over``.
    """

    token: int
    ending: _Ending
    asker: Asker | None
    refusal: str


@dataclass
class _Absence:
    since_ms: int
    claimable: bool = False


@dataclass
class GameRoom:
    """See the module docstring. ``players[0]`` moves first."""

    game_id: GameId
    variant: Variant
    terms: GameTerms
    players: tuple[PlayerInfo, PlayerInfo]
    start_fen: str
    new_token: Callable[[], int]
    settings: RoomSettings = field(default_factory=RoomSettings)
    first_version: int = 1
    """The version of the room's first event (see :meth:`~server.hub.hub.Hub.restore_game`)."""

    def __post_init__(self) -> None:
        self.game = Game(self.variant, self.start_fen)
        self.clock = GameClock(self.terms.control)
        self.log = EventLog(self.settings.event_log_capacity, self.first_version)
        self.status = "created"
        self.records: list[MoveRecord] = []
        """The committed (stored) moves, ply 1 first."""
        self._byoyomi = isinstance(self.terms.control, Byoyomi)
        self.members: dict[ConnId, int | None] = {}
        self.offers = {kind: OfferBox(kind) for kind in ("draw", "takeback", "rematch")}
        self.result: str | None = None
        self.termination: str | None = None
        self.winner: int | None = None
        self.finished_ms: int | None = None
        self.abort_at: int | None = None
        self.absent: list[_Absence | None] = [None, None]
        self.chat: dict[Audience, deque[JsonObject]] = {
            Audience.PLAYERS: deque(maxlen=self.settings.chat_history),
            Audience.SPECTATORS: deque(maxlen=self.settings.chat_history),
        }
        self._pending: _PendingMove | _PendingTakeback | _PendingEnd | None = None

    # ------------------------------------------------------------------ state

    @property
    def started(self) -> bool:
        return self.status == "started"

    @property
    def finished(self) -> bool:
        return self.status == "finished"

    @property
    def busy(self) -> bool:
        """Whether a write is awaited (state changes are refused meanwhile)."""
        return self._pending is not None

    @property
    def ending(self) -> bool:
        """Whether the game's end is decided and being written (not yet announced)."""
        return isinstance(self._pending, _PendingEnd)

    @property
    def topic(self) -> str:
        return f"game:{self.game_id}"

    def side_of(self, player_id: str) -> int | None:
        for side, player in enumerate(self.players):
            if player.id == player_id:
                return side
        return None

    def abandon_countdown_ms(self) -> int:
        """How long a player must be gone before the opponent may claim (scaled to the clock)."""
        scaled = int(self.terms.control.estimated_total_ms() * self.settings.abandon_fraction)
        return max(self.settings.abandon_min_ms, min(self.settings.abandon_max_ms, scaled))

    def next_deadline(self) -> int | None:
        """The next instant :meth:`on_time` has something to do, or ``None``."""
        if self.status != "started" or self._pending is not None:
            return None
        candidates = [self.clock.deadline(), self.abort_at]
        countdown = self.abandon_countdown_ms()
        candidates += [a.since_ms + countdown for a in self.absent if a and not a.claimable]
        due = [c for c in candidates if c is not None]
        return min(due) if due else None

    # --------------------------------------------------------------- views

    def _winner_name(self) -> str | None:
        return None if self.winner is None else SIDE_NAMES[self.winner]

    def state(self, now: int) -> JsonObject:
        """The compact state sent with refusals (stale/illegal move, game over …)."""
        return {
            "game": self.game_id,
            "v": self.log.version,
            "status": self.status,
            "ply": len(self.records),
            "fen": self._committed_fen(),
            "turn": SIDE_NAMES[self._committed_turn()],
            "clocks": self._clock_view(now),
            "legal": self._committed_legal(),
        }

    def _committed_fen(self) -> str:
        return self.game.position_at(len(self.records)).fen()

    def _committed_turn(self) -> int:
        return int(self.game.position_at(len(self.records)).turn)

    def _committed_legal(self) -> list[str]:
        if self.finished:
            return []
        if not isinstance(self._pending, _PendingMove):
            return self.game.legal_moves()
        # A move is pending and not visible yet: report what is legal before it.
        position = self.game.position_at(len(self.records))
        return sorted(position.uci(m) for m in position.legal_moves())

    def _clock_view(self, now: int) -> JsonObject:
        """Both clocks at ``now`` as everyone sees them (ignoring a move not yet stored)."""
        if not isinstance(self._pending, _PendingMove):
            return self.clock.view(now)
        before = GameClock(self.clock.control, self.clock.lag)
        before.restore(self._pending.clock_before)
        return before.view(now)

    def snapshot(self, now: int, side: int | None) -> Message:
        """The full state for one viewer (``side`` ``None`` = spectator), stamped with ``v``."""
        ply = len(self.records)
        audience = Audience.SPECTATORS if side is None else Audience.PLAYERS
        data: JsonObject = {
            "game": self.game_id,
            **self.terms.view(),
            "status": self.status,
            "role": "spectator" if side is None else SIDE_NAMES[side],
            "players": {
                name: self.terms.player_view(self.players[i]) for i, name in enumerate(SIDE_NAMES)
            },
            "start_fen": self.start_fen,
            "moves": [r.uci for r in self.records],
            "displays": [r.display for r in self.records],
            "ply": ply,
            "fen": self._committed_fen(),
            "turn": SIDE_NAMES[self._committed_turn()],
            "legal": self._committed_legal(),
            "clocks": self._clock_view(now),
            "result": self.result,
            "termination": self.termination,
            "winner": self._winner_name(),
            "offers": {
                kind: None if box.pending_from is None else SIDE_NAMES[box.pending_from]
                for kind, box in self.offers.items()
            },
            "absent": {
                SIDE_NAMES[i]: None
                if a is None
                else {"claimable": a.claimable, "claim_in_ms": max(0, self._claim_at(a) - now)}
                for i, a in enumerate(self.absent)
            },
            "chat": list(self.chat[audience]),
        }
        return Message("game", data, v=self.log.version)

    def _claim_at(self, absence: _Absence) -> int:
        return absence.since_ms + self.abandon_countdown_ms()

    # ------------------------------------------------------------- emitting

    def _emit(
        self, t: str, data: JsonObject, audience: Audience = Audience.EVERYONE
    ) -> list[Effect]:
        event = self.log.append(t, {"game": self.game_id, **data}, audience)
        conns = tuple(
            conn for conn, side in self.members.items() if audience.includes(side is not None)
        )
        effects: list[Effect] = []
        if conns:
            topic = (
                self.topic if audience is Audience.EVERYONE else f"{self.topic}:{audience.value}"
            )
            effects.append(Broadcast(topic, event.message, conns))
        if audience is Audience.EVERYONE:
            effects.append(Publish(self.topic, event.message))
        return effects

    def _refuse(self, code: str, text: str, now: int) -> CommandError:
        return CommandError(code, text, {"state": self.state(now)})

    # ------------------------------------------------------------- members

    def join(self, conn: ConnId, side: int | None, since: int | None, now: int) -> list[Effect]:
        """Add a member; send the events after ``since`` it may see, or else one snapshot."""
        self.members[conn] = side
        replay = None if since is None else self.log.since(since)
        if replay is None:
            return [Send(conn, self.snapshot(now, side))]
        return [Send(conn, e.message) for e in replay if e.audience.includes(side is not None)]

    def leave(self, conn: ConnId) -> None:
        self.members.pop(conn, None)

    # ----------------------------------------------------------- lifecycle

    def start(self, now: int) -> None:
        """The game row is stored: the game begins and the first move is awaited."""
        self.status = "started"
        self.abort_at = now + self.settings.first_move_window_ms

    def _side_of(self, ply: int) -> int:
        """The side that played move ``ply`` (the start position may give the move to either)."""
        return int(self.game.position_at(ply - 1).turn)

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
            self.records = []
            raise ValueError(f"game {self.game_id}: stored move {stored.uci!r}: {exc}") from exc
        for record in self.records[-2:]:
            time = SideTime(record.clock_ms, record.periods_left or 0)
            self.clock.set_time(self._side_of(record.ply), time)
        self.status = "started"
        outcome = self.game.outcome()
        if outcome is not None:
            winner = None if outcome.winner is None else int(outcome.winner)
            return self._finish(_Ending(outcome.result(), winner, str(outcome.termination), now))
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
            return self._finish(_Ending(None, None, "abort", now, detail="no_first_move"))
        effects: list[Effect] = []
        for side, absence in enumerate(self.absent):
            if absence is not None and not absence.claimable and now >= self._claim_at(absence):
                absence.claimable = True
                effects += self._emit("gone", {"side": SIDE_NAMES[side], "claimable": True})
        return effects

    def _flag(self, now: int) -> list[Effect]:
        loser, fell_at = self.clock.running, self.clock.deadline()
        assert loser is not None and fell_at is not None
        winner = 1 - loser
        if not self._can_win_on_time(winner):
            return self._finish(_Ending(DRAW, None, "time", fell_at, flagged=True))
        return self._finish(_Ending(RESULTS[winner], winner, "time", fell_at, flagged=True))

    def _can_win_on_time(self, winner: int) -> bool:
        """Chess family: on time-out the game is drawn if the winner has no mating material
        (the engine judges it from the committed position)."""
        if self.variant.family != "chess":
            return True
        return has_mating_material(self.game.position, winner)

    def _finish(
        self, ending: _Ending, asker: Asker | None = None, refusal: str = ""
    ) -> list[Effect]:
        """Phase one of the game's end: ask for its record; nothing changes until it is stored.

        ``asker`` is the player whose command ends the game (its ack waits for the write and a
        failure is reported to it as ``refusal``); ``None`` when the server decided the end.
        """
        token = self.new_token()
        self._pending = _PendingEnd(token, ending, asker, refusal)
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
        assert isinstance(pending, _PendingEnd)
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
        effects += self._emit("end", data)
        if pending.asker is not None:
            conn, ack = pending.asker
            effects.append(Send(conn, ack_message(ack, {"game": self.game_id})))
        effects.append(
            Publish(
                "games",
                Message(
                    "game_end",
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
        writes it until stored, see :class:`_PendingEnd`)."""
        pending = self._pending
        assert isinstance(pending, _PendingEnd)
        if pending.asker is None:
            return []
        self._pending = None
        conn, ack = pending.asker
        message = f"That could not be saved ({reason}); nothing changed, the game goes on."
        effects: list[Effect] = [
            Send(conn, error_message(pending.refusal, message, ack, {"state": self.state(now)}))
        ]
        return effects + self.on_time(now)

    def _require_started(self, now: int) -> None:
        if self.status == "finished":
            raise self._refuse("game_over", "The game is over.", now)
        if self.status != "started":
            raise CommandError("busy", "The game is being set up; try again in a moment.")

    def _require_idle(self, now: int) -> None:
        self._require_started(now)
        pending = self._pending
        if isinstance(pending, _PendingEnd):
            if pending.asker is None:  # decided and final: only its announcement waits
                raise self._refuse("game_over", "The game is over.", now)
            raise CommandError("busy", "The end of the game is being saved; try again.")
        if pending is not None:
            raise CommandError("busy", "The previous move is being saved; try again.")

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
        if isinstance(pending, _PendingMove):
            rec = pending.record
            if (rec.ply, rec.uci, pending.side) == (ply, uci, side):
                pending.acks.append((conn, ack))
                return []
        self._require_idle(now)
        if ply != committed + 1:
            raise self._refuse(
                "stale_move",
                f"That move was meant for move {ply}, but the game is at move {committed + 1}.",
                now,
            )
        if int(self.game.side_to_move) != side:
            raise self._refuse("not_your_turn", "It is not your turn.", now)
        try:
            played = self.game.play(uci)
        except (InvalidMoveError, IllegalMoveError) as exc:
            # The engine's message already names the move ("a1a5: the king on a1 cannot …").
            raise self._refuse("illegal_move", f"Illegal move {exc}", now) from None
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
        self._pending = _PendingMove(
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

    def pending_token(self) -> int | None:
        return None if self._pending is None else self._pending.token

    def move_persisted(self, now: int) -> list[Effect]:
        """Phase two, success: the move becomes visible, its acks go out, the game may end."""
        pending = self._pending
        assert isinstance(pending, _PendingMove)
        self._pending = None
        record = pending.record
        self.records.append(record)
        effects: list[Effect] = []
        effects += self._cancel_offer("takeback")
        if self.offers["draw"].pending_from == 1 - pending.side:
            # Playing on declines the opponent's draw offer.
            effects += self._cancel_offer("draw")
        effects += [
            Send(conn, ack_message(ack, {"game": self.game_id, "ply": record.ply}))
            for conn, ack in pending.acks
        ]
        effects += self._emit(
            "move",
            {
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
            },
        )
        outcome = self.game.outcome()
        if outcome is not None:
            winner = None if outcome.winner is None else int(outcome.winner)
            ending = _Ending(outcome.result(), winner, str(outcome.termination), pending.played_ms)
            effects += self._finish(ending)
        else:
            effects += self.on_time(now)
        return effects

    def move_failed(self, reason: str, now: int) -> list[Effect]:
        """Phase two, failure: undo the move exactly and tell the mover (nobody else saw it)."""
        pending = self._pending
        assert isinstance(pending, _PendingMove)
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
                error_message("move_not_saved", message, ack, {"state": self.state(now)}),
            )
            for conn, ack in pending.acks
        ]
        return effects + self.on_time(now)

    # ------------------------------------------------------------- endings

    # A player's ending is written before anyone hears of it (the asker's ack included); if the
    # write fails the player gets the ``*_not_saved`` refusal and nothing changed.

    def resign(self, side: int, now: int, asker: Asker) -> list[Effect]:
        self._require_idle(now)
        ending = _Ending(RESULTS[1 - side], 1 - side, "resignation", now)
        return self._finish(ending, asker, "resign_not_saved")

    def abort(self, side: int, now: int, asker: Asker) -> list[Effect]:
        self._require_idle(now)
        if len(self.records) >= 2:
            raise self._refuse(
                "abort_too_late", "A game can be aborted only before both players have moved.", now
            )
        ending = _Ending(None, None, "abort", now, detail=f"{SIDE_NAMES[side]}_aborted")
        return self._finish(ending, asker, "abort_not_saved")

    def claim_draw(self, side: int, now: int, asker: Asker) -> list[Effect]:
        self._require_idle(now)
        if int(self.game.side_to_move) != side:
            raise self._refuse("not_your_turn", "Only the player to move may claim a draw.", now)
        claim = self.game.claimable_draw()
        if claim is None:
            raise self._refuse("no_draw_claim", "There is no draw to claim in this position.", now)
        return self._finish(_Ending(DRAW, None, str(claim), now), asker, "draw_not_saved")

    def abandon_claim(self, side: int, outcome: str, now: int, asker: Asker) -> list[Effect]:
        self._require_idle(now)
        absence = self.absent[1 - side]
        if absence is None:
            raise self._refuse("opponent_present", "Your opponent is connected.", now)
        if not absence.claimable:
            wait_s = (self._claim_at(absence) - now + 999) // 1000
            raise self._refuse(
                "too_early", f"Your opponent may still come back; wait {wait_s} s more.", now
            )
        if len(self.records) < 2:
            raise self._refuse(
                "abort_instead", "Before both players have moved, abort the game instead.", now
            )
        if outcome == "draw":
            ending = _Ending(DRAW, None, "abandonment", now)
        else:
            ending = _Ending(RESULTS[side], side, "abandonment", now)
        return self._finish(ending, asker, "abandon_not_saved")

    # --------------------------------------------------------------- offers

    def _cancel_offer(self, kind: str) -> list[Effect]:
        offered = self.offers[kind].cancel()
        if offered is None:
            return []
        return self._emit("offer", {"kind": kind, "action": "cancel", "side": SIDE_NAMES[offered]})

    def _offer_event(self, kind: str, action: str, side: int) -> list[Effect]:
        return self._emit("offer", {"kind": kind, "action": action, "side": SIDE_NAMES[side]})

    def draw_offer(self, side: int, action: str, now: int, asker: Asker) -> list[Effect]:
        """``offer`` / ``accept`` / ``decline`` a draw (variants with ``draw_offers`` only).

        An agreement (accepting, or offering what the opponent offers) ends the game once
        stored; until then the offer stays as it was.
        """
        self._require_idle(now)
        if not self.variant.draw_offers:
            raise self._refuse(
                "draw_offers_unavailable", f"{self.variant.title} has no draw offers.", now
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
            ending = _Ending(DRAW, None, "agreement", now, agreed_by=side)
            return self._finish(ending, asker, "draw_not_saved")
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
            raise self._refuse("takeback_rated", "Takebacks are for casual games only.", now)
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
                raise self._refuse("no_move_to_take_back", "You have no move to take back.", now)
            if not box.offer(side):
                return self._offer_event("takeback", "offer", side)
            proposer = 1 - side  # the opponent's pending offer met ours: theirs is taken back
        else:
            box.accept(side)
            proposer = 1 - side
        plies = 2 if int(self.game.side_to_move) == proposer else 1
        plies = min(plies, len(self.records))
        token = self.new_token()
        self._pending = _PendingTakeback(token, proposer, plies, (conn, ack))
        return [Persist(token, MovesRetracted(self.game_id, len(self.records) - plies + 1))]

    def takeback_persisted(self, now: int) -> list[Effect]:
        pending = self._pending
        assert isinstance(pending, _PendingTakeback)
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
            "takeback",
            {
                "ply": len(self.records),
                "removed": pending.plies,
                "fen": self.game.fen(),
                "turn": SIDE_NAMES[int(self.game.side_to_move)],
                "clocks": self.clock.view(now),
                "legal": self.game.legal_moves(),
            },
        )
        conn, ack = pending.ack
        effects.append(Send(conn, ack_message(ack, {"game": self.game_id})))
        return effects + self.on_time(now)

    def takeback_failed(self, reason: str, now: int) -> list[Effect]:
        pending = self._pending
        assert isinstance(pending, _PendingTakeback)
        self._pending = None
        conn, ack = pending.ack
        effects: list[Effect] = [
            Send(
                conn,
                error_message(
                    "takeback_not_saved",
                    f"The takeback could not be saved ({reason}); the game goes on.",
                    ack,
                    {"state": self.state(now)},
                ),
            )
        ]
        effects += self._emit(
            "offer",
            {"kind": "takeback", "action": "cancel", "side": SIDE_NAMES[pending.proposer]},
        )
        return effects + self.on_time(now)

    def rematch_offer(self, side: int, action: str, now: int) -> tuple[bool, list[Effect]]:
        """``offer`` / ``accept`` / ``decline`` a rematch; returns (agreed, effects).

        On agreement the hub creates the new game and calls :meth:`rematch_started`.
        """
        if not self.finished:
            raise self._refuse("game_not_finished", "A rematch can be offered after the game.", now)
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
            raise self._refuse("game_not_finished", "A rematch can be offered after the game.", now)
        box = self.offers["rematch"]
        if action == "offer":
            box.check_offer(side)
        else:
            box.check_answer(side)

    def rematch_started(self, new_game_id: GameId) -> list[Effect]:
        self.offers["rematch"].cancel()
        return self._emit("rematch", {"new_game": new_game_id})

    def cancel_rematch(self) -> list[Effect]:
        return self._cancel_offer("rematch")

    # ----------------------------------------------------------- presence

    def presence(self, side: int, present: bool, now: int) -> list[Effect]:
        """A player's last connection went away (``present`` False) or one came back."""
        if present:
            if self.absent[side] is None:
                return []
            self.absent[side] = None
            if self.finished:
                return []
            return self._emit("back", {"side": SIDE_NAMES[side]})
        if self.absent[side] is not None or self.finished:
            return []
        absence = _Absence(now)
        self.absent[side] = absence
        return self._emit(
            "gone",
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
        return self._emit("chat", line, audience)

"""The game room's state: its settings, the writes it waits for, its views and event stream.

:class:`RoomState` holds what a room is made of (game, clock, event log, members, offer boxes,
absences, chat), the views sent to clients (``summary``, ``snapshot``), the emitting of
versioned events and the checks every change starts with. The parts of a
:class:`~server.hub.room.GameRoom` (moves, offers, life cycle) each hold it and change it; see
:mod:`server.hub.room`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import cast

from server.hub.clock import ClockState, GameClock
from server.hub.effects import Broadcast, ConnId, Effect, GameId, PremovesSet, Send
from server.hub.errors import CommandError, ErrorCode
from server.hub.eventlog import Audience, EventLog, RoomEvent
from server.hub.glicko2 import estimated_total_ms
from server.hub.identity import PlayerInfo
from server.hub.lobby import GameTerms
from server.hub.messages import AckId, Message, MessageKind, Payload
from server.hub.offers import OfferBox
from server.hub.payloads import (
    ChatLineView,
    ClocksView,
    GameSnapshot,
    MovePayload,
    OffersView,
    RoomStateView,
    SideName,
)
from server.hub.persist_tokens import PersistTokens, WriteKind
from server.rules import SIDES, Game, MoveList, MoveRecord, Side, Variant
from server.rules.time_control import Byoyomi, is_correspondence

RESULTS = ("1-0", "0-1")
DRAW = "1/2-1/2"


@dataclass(frozen=True)
class RoomSettings:
    """Tunables of every room (the hub's :class:`~server.hub.hub.HubConfig` fills them)."""

    first_move_window_ms: int = 30_000
    """A player's first move must come this long after the game starts (the second player's
    after the first move), or the game is aborted (``no_first_move``)."""
    computer_first_move_window_ms: int = 300_000
    """The same for the computer's seat (``PlayerInfo.computer``): its first move is a short
    search (server/worker/levels.py, ``FIRST_MOVE_MS``) but its job may wait in the queue behind
    other games' (an engine worker busy); a window this long is only a net for a computer whose
    workers are all gone, so that its game still ends."""
    event_log_capacity: int = 200
    chat_history: int = 50
    abandon_min_ms: int = 30_000
    abandon_max_ms: int = 180_000
    abandon_fraction: float = 0.1
    """Abandonment countdown = this fraction of the estimated game length, clamped to min/max."""


@dataclass
class PendingMove:
    """A move played on the engine and the clock, waiting for its record to be stored."""

    token: int
    record: MoveRecord
    side: Side
    gives_check: bool
    played_ms: int
    acks: list[tuple[ConnId, AckId | None]]
    clock_before: ClockState
    abort_before: int | None
    event: MovePayload | None = None
    """The move event's data, once built (:meth:`~server.hub.room_moves.Moves.prepare`)."""
    release: PreparedRelease | None = None
    """What the commit will send first, once built (:meth:`~server.hub.room_moves.Moves.prepare`)."""


@dataclass(frozen=True)
class PreparedRelease:
    """The effects a stored move releases first — its acks, then its room event — built while
    the move is being written, and the event as the log will keep it.

    Valid only while ``basis`` (:meth:`RoomState.release_basis`) is unchanged: an event, a
    member joining or leaving, another ack or an offer in the meantime makes the commit build
    them again."""

    basis: tuple[int, int, int]
    effects: tuple[Effect, ...]
    stored: tuple[object, ...]


@dataclass
class PendingTakeback:
    token: int
    proposer: Side
    plies: int
    ack: tuple[ConnId, AckId | None]


Asker = tuple[ConnId, AckId | None]
"""The connection whose command is being answered, and the command's ack id."""


@dataclass
class PendingBerserk:
    """A berserk waiting for its write (the clock is halved once it is stored)."""

    token: int
    side: Side
    asker: Asker


@dataclass(frozen=True)
class Ending:
    """How a game ends, decided at ``at_ms`` but applied only once it is stored."""

    result: str | None
    winner: Side | None
    termination: str
    at_ms: int
    detail: str | None = None
    flagged: bool = False
    """The side to move lost on time: its clock goes to zero."""
    agreed_by: Side | None = None
    """The side whose acceptance made a draw agreement (its ``offer`` event goes first)."""


@dataclass
class PendingEnd:
    """A game end waiting for its write.

    ``asker`` is the player whose command ends the game (resignation, agreement, claim, abort):
    a failed write is reported to it with ``refusal`` and the game goes on. Without an asker the
    server decided (time, first-move timeout, an engine outcome): that cannot be taken back, so
    the adapter writes it until stored and the room refuses everything with ``game_over``.
    """

    token: int
    ending: Ending
    asker: Asker | None
    refusal: ErrorCode | None


@dataclass(frozen=True)
class PendingPremoves:
    """A player's conditional premoves being written, and whom to answer once they are."""

    record: PremovesSet
    conn_id: ConnId
    ack: AckId | None


@dataclass
class Absence:
    since_ms: int
    claimable: bool = False


@dataclass
class RoomState:
    """The fields, views and events of a :class:`~server.hub.room.GameRoom` (``players[0]``
    moves first), shared by its parts."""

    game_id: GameId
    variant: Variant
    terms: GameTerms
    players: tuple[PlayerInfo, PlayerInfo]
    start_fen: str
    tokens: PersistTokens
    """Where the room's writes take their tokens (the hub's: it routes their reports)."""
    settings: RoomSettings = field(default_factory=RoomSettings)
    first_version: int = 1
    """The version of the room's first event (see :meth:`~server.hub.hub.Hub.restore_game`)."""

    def __post_init__(self) -> None:
        self.game = Game(self.variant, self.start_fen)
        self.clock = GameClock(self.terms.control)
        self.log = EventLog(self.settings.event_log_capacity, self.first_version)
        self.status = "created"
        self.records = MoveList()
        """The committed (stored) moves, ply 1 first."""
        self.byoyomi = isinstance(self.terms.control, Byoyomi)
        self.correspondence = is_correspondence(self.terms.control)
        """Days per move or no clock: the clock runs from the start (no first-move window),
        absence does not matter, a player may have many such games."""
        self.members: dict[ConnId, Side | None] = {}
        """The connections in the room, each with its player's side (``None``: a spectator)."""
        self.offer_boxes = {kind: OfferBox(kind) for kind in ("draw", "takeback", "rematch")}
        self.result: str | None = None
        self.termination: str | None = None
        self.detail: str | None = None
        """Why an aborted game was aborted (the ``end`` event's ``detail``), else ``None``."""
        self.winner: Side | None = None
        self.finished_ms: int | None = None
        self.abort_at: int | None = None
        self.absent: list[Absence | None] = [None, None]
        self.chat: dict[Audience, deque[ChatLineView]] = {
            Audience.PLAYERS: deque(maxlen=self.settings.chat_history),
            Audience.SPECTATORS: deque(maxlen=self.settings.chat_history),
        }
        self.berserk = [False, False]
        """Whether each side berserked (a tournament game: ``Lifecycle.berserk``)."""
        self.pending: PendingMove | PendingTakeback | PendingEnd | PendingBerserk | None = None
        """The write the room waits for (state changes are refused meanwhile)."""
        self.premoves: dict[Side, PremovesSet] = {}
        """The players' conditional premoves in force (:mod:`server.hub.hub_premoves`): empty
        but in a correspondence game where a player stored some."""
        self.premove_writes: dict[int, PendingPremoves] = {}
        """Conditional premoves being written, by token."""
        self._member_changes = 0
        """Counts joins and leaves (see :meth:`release_basis`)."""
        self._abandon_countdown_ms: int | None = None
        self._topic = f"game:{self.game_id}"

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
        return self.pending is not None

    @property
    def ending(self) -> bool:
        """Whether the game's end is decided and being written (not yet announced)."""
        return isinstance(self.pending, PendingEnd)

    @property
    def topic(self) -> str:
        return self._topic

    def side_of(self, player_id: str) -> Side | None:
        for side in SIDES:
            if self.players[side].id == player_id:
                return side
        return None

    def abandon_countdown_ms(self) -> int:
        """How long a player must be gone before the opponent may claim (scaled to the clock)."""
        countdown = self._abandon_countdown_ms
        if countdown is None:  # the terms never change: computed once
            settings = self.settings
            scaled = int(estimated_total_ms(self.terms.control) * settings.abandon_fraction)
            countdown = max(settings.abandon_min_ms, min(settings.abandon_max_ms, scaled))
            self._abandon_countdown_ms = countdown
        return countdown

    def next_deadline(self) -> int | None:
        """The next instant :meth:`~server.hub.room_lifecycle.Lifecycle.on_time` has something
        to do, or ``None``."""
        if self.status != "started" or self.pending is not None:
            return None
        due = self.clock.deadline()
        abort_at = self.abort_at
        if abort_at is not None and (due is None or abort_at < due):
            due = abort_at
        for absence in self.absent:
            if absence is not None and not absence.claimable:
                claim_at = absence.since_ms + self.abandon_countdown_ms()
                if due is None or claim_at < due:
                    due = claim_at
        return due

    # --------------------------------------------------------------- views

    def winner_name(self) -> SideName | None:
        return None if self.winner is None else self.winner.word

    def summary(self, now: int) -> RoomStateView:
        """The compact state sent with refusals (stale/illegal move, game over …)."""
        return {
            "game": self.game_id,
            "v": self.log.version,
            "status": self.status,
            "ply": len(self.records),
            "fen": self.committed_fen(),
            "turn": self.committed_turn().word,
            "clocks": self.clock_view(now),
            "legal": self.committed_legal(),
        }

    def first_move_left(self, now: int) -> int | None:
        """What is left at ``now`` of the side to move's first-move window (None: no window)."""
        if self.status != "started" or self.abort_at is None:
            return None
        return max(0, self.abort_at - now)

    def committed_fen(self) -> str:
        return self.game.position_at(len(self.records)).fen()

    def committed_turn(self) -> Side:
        return self.game.turn_at(len(self.records))

    def committed_legal(self) -> list[str]:
        if self.finished:
            return []
        if not isinstance(self.pending, PendingMove):
            return self.game.legal_moves()
        # A move is pending and not visible yet: report what is legal before it.
        position = self.game.position_at(len(self.records))
        return sorted(position.uci(m) for m in position.legal_moves())

    def committed_draw_claim(self) -> bool:
        """Whether the side to move may claim a draw (``claim_draw``) in the committed position;
        while a move is being stored, not yet (the room answers ``busy`` meanwhile anyway)."""
        if self.finished or isinstance(self.pending, PendingMove):
            return False
        return self.game.claimable_draw() is not None

    def clock_view(self, now: int) -> ClocksView:
        """Both clocks at ``now`` as everyone sees them (ignoring a move not yet stored)."""
        if not isinstance(self.pending, PendingMove):
            return self.clock.view(now)
        before = GameClock(self.clock.control, self.clock.lag)
        before.restore(self.pending.clock_before)
        return before.view(now)

    def snapshot(self, now: int, side: Side | None) -> Message:
        """The full state for one viewer (``side`` ``None`` = spectator), stamped with ``v``."""
        ply = len(self.records)
        audience = Audience.SPECTATORS if side is None else Audience.PLAYERS
        data: GameSnapshot = {
            "game": self.game_id,
            **self.terms.view(),
            "status": self.status,
            "role": "spectator" if side is None else side.word,
            "players": {
                "first": self.terms.player_view(self.players[Side.FIRST]),
                "second": self.terms.player_view(self.players[Side.SECOND]),
            },
            "start_fen": self.start_fen,
            "moves": [r.uci for r in self.records],
            "displays": [r.display for r in self.records],
            "ply": ply,
            "fen": self.committed_fen(),
            "turn": self.committed_turn().word,
            "legal": self.committed_legal(),
            "draw_claim": self.committed_draw_claim(),
            "first_move_ms": self.first_move_left(now),
            "clocks": self.clock_view(now),
            "result": self.result,
            "termination": self.termination,
            "detail": self.detail,
            "winner": self.winner_name(),
            "offers": cast(  # the boxes are keyed by the offers' kinds (OffersView's keys)
                OffersView,
                {
                    kind: None if box.pending_from is None else box.pending_from.word
                    for kind, box in self.offer_boxes.items()
                },
            ),
            "absent": {
                each.word: None
                if a is None
                else {"claimable": a.claimable, "claim_in_ms": max(0, self.claim_at(a) - now)}
                for each, a in zip(SIDES, self.absent)
            },
            "chat": list(self.chat[audience]),
            "berserk": [each.word for each in SIDES if self.berserk[each]],
        }
        return Message(MessageKind.GAME, data, v=self.log.version)

    def claim_at(self, absence: Absence) -> int:
        return absence.since_ms + self.abandon_countdown_ms()

    # ------------------------------------------------------------- emitting

    def emit(self, t: str, data: Payload, audience: Audience = Audience.EVERYONE) -> list[Effect]:
        return self.deliver(self.log.append(t, {"game": self.game_id, **data}, audience))

    def deliver(self, event: RoomEvent) -> list[Effect]:
        """The effects that send ``event`` to the members of its audience (and, for everyone's
        events, to the other hubs)."""
        audience = event.audience
        effects: list[Effect] = []
        if audience is Audience.EVERYONE:
            if self.members:
                effects.append(Broadcast(self._topic, event.message, tuple(self.members)))
            return effects
        conns = tuple(
            conn for conn, side in self.members.items() if audience.includes(side is not None)
        )
        if conns:
            effects.append(Broadcast(f"{self._topic}:{audience.value}", event.message, conns))
        return effects

    def refuse(self, code: ErrorCode, now: int, text: str | None = None) -> CommandError:
        return CommandError(code, text, self.summary(now))

    # --------------------------------------------------------------- offers

    def cancel_offer(self, kind: str) -> list[Effect]:
        offered = self.offer_boxes[kind].cancel()
        if offered is None:
            return []
        return self.emit(
            MessageKind.OFFER, {"kind": kind, "action": "cancel", "side": offered.word}
        )

    def offer_event(self, kind: str, action: str, side: Side) -> list[Effect]:
        return self.emit(MessageKind.OFFER, {"kind": kind, "action": action, "side": side.word})

    # ------------------------------------------------------------- members

    def release_basis(self, pending: PendingMove) -> tuple[int, int, int]:
        """What a :class:`PreparedRelease` depends on besides the move itself: the event
        versions (every change of an offer is an event too), the members, the acks the move
        waits to send."""
        return (self.log.version, self._member_changes, len(pending.acks))

    def join(self, conn: ConnId, side: Side | None, since: int | None, now: int) -> list[Effect]:
        """Add a member; send the events after ``since`` it may see, or else one snapshot."""
        self.members[conn] = side
        self._member_changes += 1
        replay = None if since is None else self.log.since(since)
        if replay is None:
            return [Send(conn, self.snapshot(now, side))]
        return [Send(conn, e.message) for e in replay if e.audience.includes(side is not None)]

    def leave(self, conn: ConnId) -> None:
        self.members.pop(conn, None)
        self._member_changes += 1

    # --------------------------------------------------------------- checks

    def arm_first_move_window(self, now: int) -> None:
        """Before both sides have moved: the side to move must move within its first-move
        window from ``now`` (the computer's is longer: see :class:`RoomSettings`). In a
        correspondence game the clock itself runs from ``now`` instead: a first move not made
        by the deadline aborts the game (see ``Lifecycle.flag``)."""
        if self.correspondence:
            if self.clock.running is None:
                self.clock.start(self.game.side_to_move, now)
            return
        mover = self.players[self.game.side_to_move]
        settings = self.settings
        window = (
            settings.computer_first_move_window_ms
            if mover.computer
            else settings.first_move_window_ms
        )
        self.abort_at = now + window

    def side_of_ply(self, ply: int) -> Side:
        """The side that played move ``ply`` (the start position may give the move to either)."""
        return self.game.turn_at(ply - 1)

    def pending_token(self) -> int | None:
        return None if self.pending is None else self.pending.token

    def new_token(self, kind: WriteKind) -> int:
        """The token of a write of ``kind`` the room asks for (registered with the hub now)."""
        return self.tokens.issue(self.game_id, kind)

    def require_started(self, now: int) -> None:
        if self.status == "finished":
            raise self.refuse(ErrorCode.GAME_OVER, now)
        if self.status != "started":
            raise CommandError(ErrorCode.BUSY, "The game is being set up; try again in a moment.")

    def require_idle(self, now: int) -> None:
        self.require_started(now)
        pending = self.pending
        if isinstance(pending, PendingEnd):
            if pending.asker is None:  # decided and final: only its announcement waits
                raise self.refuse(ErrorCode.GAME_OVER, now)
            raise CommandError(ErrorCode.BUSY, "The end of the game is being saved; try again.")
        if pending is not None:
            raise CommandError(ErrorCode.BUSY, "The previous move is being saved; try again.")

    # ----------------------------------------------------------------- chat

    def chat_line(self, side: Side | None, author: PlayerInfo, text: str) -> list[Effect]:
        """Players write to the players' chat, everyone else to the spectators' chat."""
        audience = Audience.SPECTATORS if side is None else Audience.PLAYERS
        line: ChatLineView = {
            "room": "spectators" if side is None else "players",
            "user": author.name,
            "user_id": author.id,
            "text": text,
        }
        self.chat[audience].append(line)
        return self.emit(MessageKind.CHAT, line, audience)

"""A game record: the start position, the moves, and how the game ended.

The record keeps one repetition key per ply and, per side, a running count of checking
moves, so repetition and perpetual check cost O(1) per move: no replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum, StrEnum
from typing import Literal

from .errors import IllegalMoveError
from .notation import display_move
from .position import Move, Position, PositionSnapshot
from .uci import legal_uci
from .variant import RoyalModel, Variant

__all__ = [
    "ENGINE_TERMINATIONS",
    "SIDES",
    "SIDE_NAMES",
    "Game",
    "Outcome",
    "PlayedMove",
    "Side",
    "Termination",
    "decide_outcome",
]


class Side(IntEnum):
    """``FIRST`` moves first (sente / White / Persians)."""

    FIRST = 0
    SECOND = 1

    @property
    def other(self) -> Side:
        return SIDES[1 - self]

    @property
    def word(self) -> Literal["first", "second"]:
        """The protocol's word for the side: ``"first"`` or ``"second"``."""
        return SIDE_NAMES[self]


SIDES: tuple[Side, Side] = (Side.FIRST, Side.SECOND)
"""Both sides in turn order, also by turn (0 or 1): looked up, where ``Side(turn)`` is an enum
call of about a microsecond, and iterated, where ``for side in Side`` costs a generator of
enum machinery (the hub walks the sides on every move)."""

SIDE_NAMES: tuple[Literal["first"], Literal["second"]] = ("first", "second")
"""The protocol's word for each :class:`Side`, by its value: ``SIDE_NAMES[Side.FIRST]``, or
``Side.FIRST.word``."""


class Termination(StrEnum):
    """Every way a game ends, defined once for the rules, the hub, the store and the exports.

    The adjudicator decides the first group from the position and its history
    (:data:`ENGINE_TERMINATIONS`); the server decides the others (a player's resignation, a
    flag, an agreed or claimed draw, an abort, an abandonment claim).
    """

    CHECKMATE = "checkmate"
    STALEMATE = "stalemate"
    ROYAL_CAPTURE = "royal_capture"
    REPETITION = "repetition"
    PERPETUAL_CHECK = "perpetual_check"
    FIFTY_MOVES = "fifty_moves"
    SEVENTY_FIVE_MOVES = "seventy_five_moves"
    DEAD_POSITION = "dead_position"
    # decided by the server
    RESIGNATION = "resignation"
    TIME = "time"
    AGREEMENT = "agreement"
    ABORT = "abort"
    ABANDONMENT = "abandonment"


ENGINE_TERMINATIONS = frozenset(
    {
        Termination.CHECKMATE,
        Termination.STALEMATE,
        Termination.ROYAL_CAPTURE,
        Termination.REPETITION,
        Termination.PERPETUAL_CHECK,
        Termination.FIFTY_MOVES,
        Termination.SEVENTY_FIVE_MOVES,
        Termination.DEAD_POSITION,
    }
)
"""The endings :func:`decide_outcome` and :meth:`Game.claimable_draw` decide from the moves."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended. ``winner`` is None for a draw."""

    termination: Termination
    winner: Side | None

    def result(self) -> str:
        """``"1-0"`` (first player won), ``"0-1"`` or ``"1/2-1/2"``."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner is Side.FIRST else "0-1"


@dataclass(frozen=True, slots=True)
class PlayedMove:
    """What :meth:`Game.play` returns: the move as sent and as shown to people."""

    uci: str
    display: str
    gives_check: bool
    ply: int


class _Undecided(Enum):
    """The outcome after a ply that nobody asked for yet."""

    UNDECIDED = 0


_UNDECIDED = _Undecided.UNDECIDED


class Game:
    """A game of ``variant`` from ``start_fen`` (the variant's standard start by default).

    >>> from server.rules import get_variant
    >>> g = Game(get_variant("minishogi"))
    >>> g.play("e1e4").display
    'Rx1b'
    """

    def __init__(self, variant: Variant, start_fen: str | None = None) -> None:
        self.variant = variant
        self.start_fen = start_fen or variant.start_fen
        start = Position.from_fen(variant, self.start_fen)
        self.start_turn = start.turn
        # The last two positions as objects (the current one, and the one a pending move
        # left); older ones as Position.snapshot() tuples, which the garbage collector stops
        # tracking once it has seen them: a game holds no object per ply for it to scan.
        self._positions: list[Position | PositionSnapshot] = [start]
        self._moves: list[Move] = []
        self.moves: list[str] = []
        self.displays: list[str] = []
        self._keys: list[int] = [start.key]
        # Plies by position key; tuples, which the garbage collector stops tracking, where
        # lists would be scanned by every full collection for as long as the game lasts.
        self._seen: dict[int, tuple[int, ...]] = {start.key: (0,)}
        # _checks[side][p]: checking moves made by ``side`` in plies 1..p.
        self._checks: tuple[list[int], list[int]] = ([0], [0])
        # The outcome after each ply, decided when first asked (see :meth:`outcome`).
        self._outcome: list[Outcome | _Undecided | None] = [_UNDECIDED]

    # ------------------------------------------------------------------ state

    @property
    def position(self) -> Position:
        last = self._positions[-1]
        assert isinstance(last, Position)
        return last

    @property
    def ply(self) -> int:
        return len(self._moves)

    @property
    def side_to_move(self) -> Side:
        return SIDES[self.position.turn]

    def fen(self) -> str:
        return self.position.fen()

    def turn_at(self, ply: int) -> Side:
        """The side to move after ``ply`` moves (0 = start)."""
        return SIDES[self.position_at(ply).turn]

    def position_at(self, ply: int) -> Position:
        """The position after ``ply`` moves (0 = start)."""
        kept = self._positions[ply]
        if isinstance(kept, Position):
            return kept
        return Position.from_snapshot(self.variant, kept)

    def legal_moves(self) -> list[str]:
        """Sorted coordinate moves of the side to move; empty once the game is over."""
        if self.outcome() is not None:
            return []
        return legal_uci(self.position)

    def outcome(self) -> Outcome | None:
        """The automatic ending reached, if any.

        Decided when first asked after a move, not by :meth:`play`: a server that must store a
        move before it shows it can thus generate the next legal moves while the write is on
        its way (the outcome's "has a legal move" comes from generating them whole, since the
        hub sends the whole list with every move anyway).
        """
        last = self._outcome[-1]
        if last is _UNDECIDED:
            self.position.legal_moves()
            last = self._outcome[-1] = decide_outcome(self)
        return last

    # ------------------------------------------------------------------ moves

    def play(self, text: str) -> PlayedMove:
        """Play a move in coordinate form; raise InvalidMoveError / IllegalMoveError."""
        if self.outcome() is not None:
            raise IllegalMoveError("the game is over")
        pos = self.position
        move = pos.legal_by_text().get(text)
        if move is None:
            return self.push(pos.move_from_uci(text))
        return self.push(move, text)

    def push(self, move: Move, uci: str | None = None) -> PlayedMove:
        """Play a move already known to be legal (``uci``: its coordinate text, if known)."""
        pos = self.position
        move = self.variant.t.shared(move)  # the record keeps no Move of its own per ply
        display = display_move(pos, move)
        after = pos.play(move)
        mover = pos.turn
        check = after.is_check()
        self._positions.append(after)
        if len(self._positions) > 2:
            old = self._positions[-3]
            if isinstance(old, Position):
                self._positions[-3] = old.snapshot()
        self._moves.append(move)
        if uci is None:
            uci = pos.uci(move)
        self.moves.append(uci)
        self.displays.append(display)
        ply = len(self._moves)
        key = after.key
        self._keys.append(key)
        self._seen[key] = (*self._seen.get(key, ()), ply)
        checker, other = self._checks if mover == 0 else self._checks[::-1]
        checker.append(checker[-1] + 1 if check else checker[-1])
        other.append(other[-1])
        self._outcome.append(_UNDECIDED)
        pos.forget_move_lists()  # history needs no move lists (see Position.forget_move_lists)
        return PlayedMove(uci, display, check, ply)

    def undo(self) -> None:
        """Take back the last move."""
        if not self._moves:
            raise IllegalMoveError("there is no move to take back")
        key = self._keys.pop()
        plies = self._seen[key][:-1]
        if plies:
            self._seen[key] = plies
        else:
            del self._seen[key]
        self._positions.pop()
        for i in (-1, -2):
            if len(self._positions) >= -i:
                self._positions[i] = self.position_at(len(self._positions) + i)
        self._moves.pop()
        self.moves.pop()
        self.displays.pop()
        for side in (0, 1):
            self._checks[side].pop()
        self._outcome.pop()

    # ------------------------------------------------------------- repetition

    def repetitions(self) -> int:
        """How many times the current position has occurred (1 = first time)."""
        return len(self._seen[self._keys[-1]])

    def _perpetual_checker(self, first_ply: int) -> tuple[bool, bool]:
        """For the stretch of moves after ``first_ply`` up to now: did each side check every move?"""
        last = self.ply
        n = last - first_ply
        opener = (self.start_turn + first_ply) % 2  # the side that made ply first_ply + 1
        made = {opener: (n + 1) // 2, 1 - opener: n // 2}
        result = []
        for side in (0, 1):
            checks = self._checks[side][last] - self._checks[side][first_ply]
            result.append(made[side] > 0 and checks == made[side])
        return result[0], result[1]

    def claimable_draw(self) -> Termination | None:
        """A draw the player to move may claim now (chess family: 3-fold, 50-move)."""
        if self.outcome() is not None:
            return None
        rep = self.variant.repetition
        if rep.claim is not None and self.repetitions() >= rep.claim:
            return Termination.REPETITION
        rule = self.variant.move_rule
        if rule is not None and self.position.halfmove >= 2 * rule.claim:
            return Termination.FIFTY_MOVES
        return None


def decide_outcome(game: Game) -> Outcome | None:
    """The automatic ending of ``game`` after its last move, in order of precedence:

    1. royal capture: the side to move has lost its last royal piece (model M4);
    2. no legal move: checkmate if in check, else stalemate (a loss or a draw per variant);
    3. n-fold repetition (automatic count): perpetual checker loses, else the variant's
       default (draw, or the first player loses);
    4. the automatic move-count rule (75 moves);
    5. dead position (variant hook).
    """
    pos = game.position
    v = game.variant
    mover = SIDES[pos.turn]
    if not pos.royals[mover] and v.royalty[mover] is not RoyalModel.CHECKMATE:
        return Outcome(Termination.ROYAL_CAPTURE, mover.other)
    if not pos.has_legal_move():
        if pos.is_check():
            return Outcome(Termination.CHECKMATE, mover.other)
        return Outcome(Termination.STALEMATE, mover.other if v.stalemate_loses else None)
    rep = v.repetition
    seen = game._seen[game._keys[-1]]
    if len(seen) >= rep.automatic:
        first_ply = seen[-rep.automatic]
        first_checks, second_checks = game._perpetual_checker(first_ply)
        if rep.perpetual_check_loses and first_checks != second_checks:
            return Outcome(Termination.PERPETUAL_CHECK, Side.SECOND if first_checks else Side.FIRST)
        if rep.first_player_loses and not (first_checks and second_checks):
            return Outcome(Termination.REPETITION, Side.SECOND)
        return Outcome(Termination.REPETITION, None)
    if v.move_rule is not None and pos.halfmove >= 2 * v.move_rule.automatic:
        return Outcome(Termination.SEVENTY_FIVE_MOVES, None)
    if v.dead_position is not None and v.dead_position(pos):
        return Outcome(Termination.DEAD_POSITION, None)
    return None

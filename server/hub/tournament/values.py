"""The tournament core's values: settings, entries, the events that make a tournament, standings.

Everything here is a small frozen value. A tournament *is* its settings plus the ordered tuple of
its :data:`Event` values (what the store keeps, one row each); every other fact (who is in, the
scores, the next pairings, the standings) is a pure function of those (``state.replay``,
``standings``, ``arena.pair_wave``, ``swiss.pair_round``, ``round_robin.schedule``). Times are
integer milliseconds since the epoch, given by the caller (the core never reads a clock).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from server.hub.identity import PlayerId
from server.rules.record import ResultCode
from server.rules.time_control import TimeControl, is_correspondence
from server.rules.variants import VARIANT_NAMES

__all__ = [
    "FORMATS",
    "Bye",
    "Color",
    "Ended",
    "EntryStatus",
    "Event",
    "Finished",
    "Format",
    "Joined",
    "Paired",
    "Paused",
    "Resumed",
    "StandingRow",
    "Started",
    "TournamentGame",
    "TournamentSettings",
    "Withdrew",
]

Format = Literal["arena", "swiss", "round_robin", "double_round_robin"]
"""Arena (fixed duration, re-paired on every game end), Swiss (fixed rounds, FIDE Dutch), single
or double round robin (FIDE Berger tables)."""
FORMATS: tuple[Format, ...] = get_args(Format)

Color = Literal["white", "black"]
EntryStatus = Literal["active", "paused", "withdrawn"]
"""``paused``: in the standings, not paired until resumed (arena). ``withdrawn``: in the standings
with the points already scored, never paired again."""

MAX_ROUNDS = 50
MAX_DURATION_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True)
class TournamentSettings:
    """What a tournament is, fixed at creation.

    ``start_at_ms`` and ``start_when_joined`` are two ways to start: at a time, or as soon as
    that many players have joined (at least one of them is set; with both, whichever comes
    first). ``duration_ms`` is the arena's length (from its start); ``rounds`` is a Swiss's
    number of rounds (a round robin's follow from its players). ``password_hash`` is the entry
    password's hash made by the adapter's password hasher (never the text; the door verifies a
    joiner's text against it and tells the core the outcome). ``min_rating``: a joiner's rating
    in the tournament's pool must be at least this. ``bots`` / ``computer``: whether bot accounts
    / the computer player may enter. ``max_players`` bounds the entries (a limit of the door).

    :raises ValueError: an unknown variant or format, a missing start, a Swiss without rounds, an
        arena without duration, or numbers out of range.
    """

    name: str
    format: Format
    variant: str
    control: TimeControl
    rated: bool = True
    start_at_ms: int | None = None
    start_when_joined: int | None = None
    duration_ms: int | None = None
    rounds: int | None = None
    password_hash: str | None = None
    min_rating: int | None = None
    bots: bool = True
    computer: bool = False
    max_players: int = 1000
    berserk: bool = True
    """Arena only: whether players may berserk."""
    team: str | None = None
    """A free label the creator gave (the team id of lichess's ``/api/swiss/new/{teamId}``: we
    have no teams; shown back, never checked)."""

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"unknown tournament format {self.format!r}")
        if self.variant not in VARIANT_NAMES:
            raise ValueError(f"unknown variant {self.variant!r}")
        if is_correspondence(self.control):
            # A tournament's rounds and arena's duration assume a running clock.
            raise ValueError("tournaments are played on a clock, not by correspondence")
        if self.start_at_ms is None and self.start_when_joined is None:
            raise ValueError("a tournament needs a start time or a number of players")
        if self.start_when_joined is not None and not 2 <= self.start_when_joined <= self.max_players:
            raise ValueError("start_when_joined must be between 2 and max_players")
        if self.format == "arena":
            if self.duration_ms is None or not 0 < self.duration_ms <= MAX_DURATION_MS:
                raise ValueError("an arena needs a duration of at most a week")
        elif self.format == "swiss" and (self.rounds is None or not 1 <= self.rounds <= MAX_ROUNDS):
            raise ValueError(f"a Swiss needs 1 to {MAX_ROUNDS} rounds")
        if self.max_players < 2:
            raise ValueError("max_players must be at least 2")
        if self.password_hash == "":
            raise ValueError("an empty password hash: use None for no password")


@dataclass(frozen=True)
class TournamentGame:
    """A finished tournament game: who had which colour, the result, its length and berserks.

    ``plies`` counts half-moves played. ``white_berserk`` / ``black_berserk``: that player
    halved their own clock before their first move (arena).
    """

    white: PlayerId
    black: PlayerId
    result: ResultCode
    plies: int
    white_berserk: bool = False
    black_berserk: bool = False

    def points_of(self, player: PlayerId) -> float:
        """1, ½ or 0: the game's chess result for ``player``."""
        if self.result == "1/2-1/2":
            return 0.5
        won_white = self.result == "1-0"
        return 1.0 if won_white == (player == self.white) else 0.0

    def berserk_of(self, player: PlayerId) -> bool:
        return self.white_berserk if player == self.white else self.black_berserk


# --- Events: the facts a tournament is made of, in the order they happened ---------------------


@dataclass(frozen=True)
class Joined:
    """``player`` entered (or came back after withdrawing), with their name and rating then."""

    player: PlayerId
    name: str
    rating: int
    at_ms: int
    bot: bool = False


@dataclass(frozen=True)
class Withdrew:
    """``player`` left: never paired again; points kept; may join again (a new :class:`Joined`)."""

    player: PlayerId
    at_ms: int


@dataclass(frozen=True)
class Paused:
    """``player`` is not paired until :class:`Resumed` (arena)."""

    player: PlayerId
    at_ms: int


@dataclass(frozen=True)
class Resumed:
    player: PlayerId
    at_ms: int


@dataclass(frozen=True)
class Started:
    at_ms: int


@dataclass(frozen=True)
class Ended:
    at_ms: int


@dataclass(frozen=True)
class Paired:
    """A game was created: ``game_id`` between ``white`` and ``black`` in ``round`` (arena: the
    wave's number)."""

    game_id: str
    round: int
    white: PlayerId
    black: PlayerId
    at_ms: int


@dataclass(frozen=True)
class Bye:
    """``player`` sits out ``round`` and scores ``points``: 1 for the pairing-allocated bye (odd
    number of players; TRF code ``U``), 0 for a round missed (absent or joined late: ``Z``)."""

    player: PlayerId
    round: int
    points: float
    at_ms: int


@dataclass(frozen=True)
class Finished:
    """The game ``game_id`` (an earlier :class:`Paired`) ended with ``result``."""

    game_id: str
    result: TournamentGame
    at_ms: int


Event = Joined | Withdrew | Paused | Resumed | Started | Ended | Paired | Bye | Finished
"""One stored fact of a tournament."""


@dataclass(frozen=True)
class StandingRow:
    """One line of the standings.

    ``rank`` starts at 1; tied players (equal score and tie-breaks) share a rank. ``score`` is
    in the format's unit: arena points (integers), chess points otherwise (½ for a draw).
    ``tiebreaks`` are named (``"buchholz_cut1"``, ``"sonneborn_berger"``, ``"performance"``…),
    in the order they break ties. ``fire``: the player is on a streak (arena: two wins in a row).
    ``sheet`` is the arena score sheet: each game's points in order, e.g. ``(2, 2, 4, 0)``.
    """

    rank: int
    player: PlayerId
    name: str
    rating: int
    score: float
    games: int
    status: EntryStatus
    tiebreaks: tuple[tuple[str, float], ...] = ()
    fire: bool = False
    sheet: tuple[int, ...] = ()

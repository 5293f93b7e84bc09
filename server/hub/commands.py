"""Typed client commands and :func:`parse_command`, which builds them from decoded JSON.

A client frame is ``{"t": type, "d": payload, "a": ack_id}``; ``d`` may be omitted when the command
has no fields, ``a`` is optional (an int or a string of at most 64 characters). Unknown types,
missing fields, wrong types, out-of-range values and unknown fields all raise
:class:`~server.hub.errors.ProtocolError` with a message that names the problem. Parsing is pure and
checks shape only; whether a variant exists or a seek id is open is decided by the hub.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from server.hub.clock import Byoyomi, Fischer, TimeControl
from server.hub.errors import ProtocolError
from server.hub.messages import AckId, Message, error_message

ColourChoice = Literal["first", "second", "random"]
OfferKind = Literal["draw", "takeback", "rematch"]
OfferAction = Literal["offer", "accept", "decline"]
AbandonOutcome = Literal["win", "draw"]

MAX_ACK_LENGTH = 64
MAX_NAME_LENGTH = 64
MAX_GAME_ID_LENGTH = 32
MAX_MOVE_LENGTH = 32
MAX_CHAT_LENGTH = 300
MAX_REASON_LENGTH = 140
MAX_RATING = 4000
MAX_PLY = 100_000
MAX_ID = 2**53
MAX_BASE_S = 3 * 3600
MIN_FISCHER_BASE_S = 15
MAX_INCREMENT_S = 180
MAX_PERIOD_S = 600
MAX_PERIODS = 10


@dataclass(frozen=True)
class Command:
    """Base of every command; ``ack`` is the client's ack id (answered by ``ack`` or ``error``)."""

    ack: AckId | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class SeekCommand(Command):
    """``seek``: post a seek (or pair at once with a waiting one that fits)."""

    variant: str
    control: TimeControl
    rated: bool = False
    colour: ColourChoice = "random"
    rating_range: tuple[int, int] | None = None
    manual: bool = False


@dataclass(frozen=True)
class UnseekCommand(Command):
    """``unseek``: withdraw one seek, or all of the player's seeks when ``seek_id`` is ``None``."""

    seek_id: int | None = None


@dataclass(frozen=True)
class SoughtCommand(Command):
    """``sought``: list open seeks; ``watch`` True/False starts/stops live updates."""

    watch: bool | None = None


@dataclass(frozen=True)
class PlayCommand(Command):
    """``play``: accept an open seek."""

    seek_id: int


@dataclass(frozen=True)
class MatchCommand(Command):
    """``match``: challenge a named online player directly."""

    to: str
    variant: str
    control: TimeControl
    rated: bool = False
    colour: ColourChoice = "random"


@dataclass(frozen=True)
class AcceptCommand(Command):
    """``accept``: the target of a challenge accepts it."""

    challenge_id: int


@dataclass(frozen=True)
class DeclineCommand(Command):
    """``decline``: the target of a challenge declines it, optionally saying why."""

    challenge_id: int
    reason: str | None = None


@dataclass(frozen=True)
class WithdrawCommand(Command):
    """``withdraw``: the sender of a challenge takes it back."""

    challenge_id: int


@dataclass(frozen=True)
class JoinCommand(Command):
    """``join``: follow a game room (player or observer); ``since`` is the last version seen."""

    game_id: str
    since: int | None = None


@dataclass(frozen=True)
class LeaveCommand(Command):
    """``leave``: stop following a game room."""

    game_id: str


@dataclass(frozen=True)
class MoveCommand(Command):
    """``move``: play ``move`` (engine coordinate form) as the game's move number ``ply`` (1-based)."""

    game_id: str
    ply: int
    move: str


@dataclass(frozen=True)
class ResignCommand(Command):
    game_id: str


@dataclass(frozen=True)
class AbortCommand(Command):
    game_id: str


@dataclass(frozen=True)
class ClaimDrawCommand(Command):
    """``claim_draw``: claim a draw the rules allow on claim (3-fold repetition, 50 moves)."""

    game_id: str


@dataclass(frozen=True)
class OfferCommand(Command):
    """``draw_offer`` … ``rematch_decline``: one action on one kind of offer."""

    game_id: str
    kind: OfferKind
    action: OfferAction


@dataclass(frozen=True)
class AbandonClaimCommand(Command):
    """``abandon_claim``: after the opponent's absence countdown, claim the win or a draw."""

    game_id: str
    outcome: AbandonOutcome


@dataclass(frozen=True)
class ChatCommand(Command):
    """``chat``: a line in the game's players' chat (players) or spectators' chat (others)."""

    game_id: str
    text: str


# --- field readers -------------------------------------------------------------------------------


class _Fields:
    """Reads typed fields out of a payload and rejects fields nobody asked for."""

    def __init__(self, where: str, payload: Mapping[str, Any]) -> None:
        self.where = where
        self.payload = payload
        self.seen: set[str] = set()

    def _get(self, name: str, required: bool) -> Any:
        self.seen.add(name)
        if name not in self.payload or (not required and self.payload[name] is None):
            if required:
                raise ProtocolError(f"{self.where}: missing field {name!r}")
            return None
        return self.payload[name]

    def string(self, name: str, max_length: int, required: bool = True) -> Any:
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ProtocolError(f"{self.where}: field {name!r} must be a string")
        if not value or len(value) > max_length:
            raise ProtocolError(
                f"{self.where}: field {name!r} must have 1 to {max_length} characters"
            )
        return value

    def integer(self, name: str, low: int, high: int, required: bool = True) -> Any:
        value = self._get(name, required)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ProtocolError(f"{self.where}: field {name!r} must be an integer")
        if not low <= value <= high:
            raise ProtocolError(f"{self.where}: field {name!r} must be between {low} and {high}")
        return value

    def boolean(self, name: str, required: bool = True) -> Any:
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise ProtocolError(f"{self.where}: field {name!r} must be true or false")
        return value

    def choice(self, name: str, options: tuple[str, ...], required: bool = True) -> Any:
        value = self._get(name, required)
        if value is None:
            return None
        if value not in options:
            raise ProtocolError(
                f"{self.where}: field {name!r} must be one of {', '.join(map(repr, options))}"
            )
        return value

    def time_control(self, name: str) -> TimeControl:
        value = self._get(name, True)
        if not isinstance(value, Mapping):
            raise ProtocolError(f"{self.where}: field {name!r} must be an object")
        tc = _Fields(f"{self.where}.{name}", value)
        kind = tc.choice("kind", ("fischer", "byoyomi"))
        control: TimeControl
        if kind == "fischer":
            control = Fischer.from_seconds(
                tc.integer("base_s", MIN_FISCHER_BASE_S, MAX_BASE_S),
                tc.integer("inc_s", 0, MAX_INCREMENT_S),
            )
        else:
            control = Byoyomi.from_seconds(
                tc.integer("main_s", 0, MAX_BASE_S),
                tc.integer("period_s", 1, MAX_PERIOD_S),
                tc.integer("periods", 1, MAX_PERIODS),
            )
        tc.done()
        return control

    def rating_range(self, name: str) -> tuple[int, int] | None:
        value = self._get(name, False)
        if value is None:
            return None
        if (
            not isinstance(value, list)
            or len(value) != 2
            or any(isinstance(x, bool) or not isinstance(x, int) for x in value)
        ):
            raise ProtocolError(f"{self.where}: field {name!r} must be [min, max] (integers)")
        low, high = value
        if not 0 <= low <= high <= MAX_RATING:
            raise ProtocolError(
                f"{self.where}: field {name!r} must satisfy 0 <= min <= max <= {MAX_RATING}"
            )
        return (low, high)

    def done(self) -> None:
        unknown = sorted(set(self.payload) - self.seen)
        if unknown:
            raise ProtocolError(f"{self.where}: unknown field(s) {', '.join(map(repr, unknown))}")


def _seek(f: _Fields, ack: AckId | None) -> Command:
    return SeekCommand(
        variant=f.string("variant", MAX_NAME_LENGTH),
        control=f.time_control("tc"),
        rated=bool(f.boolean("rated", required=False)),
        colour=f.choice("colour", ("first", "second", "random"), required=False) or "random",
        rating_range=f.rating_range("range"),
        manual=bool(f.boolean("manual", required=False)),
        ack=ack,
    )


def _match(f: _Fields, ack: AckId | None) -> Command:
    return MatchCommand(
        to=f.string("to", MAX_NAME_LENGTH),
        variant=f.string("variant", MAX_NAME_LENGTH),
        control=f.time_control("tc"),
        rated=bool(f.boolean("rated", required=False)),
        colour=f.choice("colour", ("first", "second", "random"), required=False) or "random",
        ack=ack,
    )


def _game(f: _Fields) -> str:
    value: str = f.string("game", MAX_GAME_ID_LENGTH)
    return value


def _offer(kind: OfferKind, action: OfferAction) -> Callable[[_Fields, AckId | None], Command]:
    def parse(f: _Fields, ack: AckId | None) -> Command:
        return OfferCommand(_game(f), kind, action, ack=ack)

    return parse


_PARSERS: dict[str, Callable[[_Fields, AckId | None], Command]] = {
    "seek": _seek,
    "unseek": lambda f, a: UnseekCommand(f.integer("id", 1, MAX_ID, required=False), ack=a),
    "sought": lambda f, a: SoughtCommand(f.boolean("watch", required=False), ack=a),
    "play": lambda f, a: PlayCommand(f.integer("id", 1, MAX_ID), ack=a),
    "match": _match,
    "accept": lambda f, a: AcceptCommand(f.integer("id", 1, MAX_ID), ack=a),
    "decline": lambda f, a: DeclineCommand(
        f.integer("id", 1, MAX_ID), f.string("reason", MAX_REASON_LENGTH, required=False), ack=a
    ),
    "withdraw": lambda f, a: WithdrawCommand(f.integer("id", 1, MAX_ID), ack=a),
    "join": lambda f, a: JoinCommand(_game(f), f.integer("v", 0, MAX_ID, required=False), ack=a),
    "leave": lambda f, a: LeaveCommand(_game(f), ack=a),
    "move": lambda f, a: MoveCommand(
        _game(f), f.integer("ply", 1, MAX_PLY), f.string("move", MAX_MOVE_LENGTH), ack=a
    ),
    "resign": lambda f, a: ResignCommand(_game(f), ack=a),
    "abort": lambda f, a: AbortCommand(_game(f), ack=a),
    "claim_draw": lambda f, a: ClaimDrawCommand(_game(f), ack=a),
    "abandon_claim": lambda f, a: AbandonClaimCommand(
        _game(f), f.choice("outcome", ("win", "draw")), ack=a
    ),
    "chat": lambda f, a: ChatCommand(_game(f), f.string("text", MAX_CHAT_LENGTH), ack=a),
}
for _kind in ("draw", "takeback", "rematch"):
    for _action in ("offer", "accept", "decline"):
        _PARSERS[f"{_kind}_{_action}"] = _offer(_kind, _action)

COMMAND_TYPES: frozenset[str] = frozenset(_PARSERS)
"""Every command type name the protocol knows."""


def parse_command(obj: object) -> Command:
    """Validate a decoded JSON frame and build its command.

    >>> parse_command({"t": "move", "d": {"game": "g1", "ply": 3, "move": "c4c5+"}, "a": 9})
    MoveCommand(ack=9, game_id='g1', ply=3, move='c4c5+')

    :raises ProtocolError: unknown type, missing/extra/wrong-typed field, value out of range.
    """
    if not isinstance(obj, Mapping):
        raise ProtocolError("a frame must be a JSON object")
    extra = sorted(set(obj) - {"t", "d", "a"})
    if extra:
        raise ProtocolError(f"unknown frame key(s) {', '.join(map(repr, extra))}")
    kind = obj.get("t")
    if not isinstance(kind, str):
        raise ProtocolError("a frame needs a string field 't' (the command type)")
    parser = _PARSERS.get(kind)
    if parser is None:
        raise ProtocolError(f"unknown command type {kind!r}")
    ack = obj.get("a")
    if ack is not None and not (
        (isinstance(ack, int) and not isinstance(ack, bool) and abs(ack) <= MAX_ID)
        or (isinstance(ack, str) and 0 < len(ack) <= MAX_ACK_LENGTH)
    ):
        raise ProtocolError(
            f"'a' (ack id) must be an integer or a string of 1 to {MAX_ACK_LENGTH} characters"
        )
    payload = obj.get("d", {})
    if payload is None:
        payload = {}
    if not isinstance(payload, Mapping):
        raise ProtocolError(f"{kind}: 'd' must be an object")
    fields = _Fields(kind, payload)
    command = parser(fields, ack)
    fields.done()
    return command


def ack_of(obj: object) -> AckId | None:
    """The ack id of a frame, if it has a valid one (to address the error of a bad frame)."""
    if isinstance(obj, Mapping):
        ack = obj.get("a")
        if (isinstance(ack, int) and not isinstance(ack, bool)) or (
            isinstance(ack, str) and len(ack) <= MAX_ACK_LENGTH
        ):
            return ack
    return None


def bad_request(obj: object, error: ProtocolError) -> Message:
    """The ``error`` message answering a frame that :func:`parse_command` rejected."""
    return error_message(ProtocolError.code, str(error), ack_of(obj))

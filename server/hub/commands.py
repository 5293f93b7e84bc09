"""Typed client commands, the frame envelope, and the one schema of every hub command.

A client frame is ``{"t": type, "d": payload, "a": ack_id}``; ``d`` may be omitted (or ``null``)
when the command has no fields, ``a`` is optional (an integer of at most 2**53 in magnitude, or a
string of 1 to 64 characters). :func:`parse_envelope` checks that shape for *every* frame type,
the transport's own (login, review) included, before anything looks at ``t``; :func:`command_of`
then reads the payload of a hub command with its schema (the ``_PARSERS`` table below, through a
:class:`FieldReader`). Unknown types, missing fields, wrong JSON types, out-of-range values,
unknown fields, text that is not valid Unicode and control characters in text
(:mod:`server.hub.user_text`) all raise
:class:`~server.hub.errors.ProtocolError` with a message that names the field. Parsing is pure
and checks shape only; whether a variant exists or a seek id is open is decided by the hub.

The commands are transport-neutral: the websocket adapter builds them from decoded JSON, any
other adapter may build them directly (their values must pass the same checks, see
:func:`valid_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

from server.hub.errors import ProtocolError
from server.hub.fields import (
    EMPTY_PAYLOAD,
    MAX_ACK_LENGTH,
    MAX_CHAT_LENGTH,
    MAX_ID,
    MAX_LEVEL,
    MAX_MOVE_LENGTH,
    MAX_NAME_LENGTH,
    MAX_PLY,
    MAX_REASON_LENGTH,
    MAX_TYPE_LENGTH,
    MIN_LEVEL,
    FieldReader,
    FieldSpec,
    schema_of,
    shown,
    valid_ack,
    valid_text,
)
from server.hub.game_ids import GAME_ID_MAX_LENGTH
from server.hub.messages import AckId, Message, error_message
from server.rules.time_control import TimeControl

ColourChoice = Literal["first", "second", "random"]
OfferKind = Literal["draw", "takeback", "rematch"]
OfferAction = Literal["offer", "accept", "decline"]
AbandonOutcome = Literal["win", "draw"]

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
class WhoCommand(Command):
    """``who``: list the players online on this server."""


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
class ChallengeAiCommand(Command):
    """Play the computer at once (a casual game): ``level`` 1 (weakest) to 8 (the engine's best
    at the clock), the side wanted, the clock (docs/engines.md)."""

    variant: str
    level: int
    control: TimeControl
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
class BerserkCommand(Command):
    """``berserk``: halve one's own clock before one's first move (tournaments that allow it)."""

    game_id: str


@dataclass(frozen=True)
class ChatCommand(Command):
    """``chat``: a line in the game's players' chat (players) or spectators' chat (others)."""

    game_id: str
    text: str


@dataclass(frozen=True)
class PremovesCommand(Command):
    """``premoves``: replace the player's conditional premoves in a correspondence game with
    ``lines`` (each: opponent's move, own reply, …; docs/correspondence.md)."""

    game_id: str
    lines: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class PremovesClearCommand(Command):
    """``premoves_clear``: drop the player's conditional premoves in a game."""

    game_id: str


@dataclass(frozen=True)
class PremoveLineCommand(Command):
    """``premove_line`` (read-only): the position and the legal moves after ``moves`` (0 to
    :data:`MAX_PREMOVE_PLIES`, the opponent's first) are played from the current position of a
    correspondence game the player plays; a client builds a conditional line on a board with it
    (it has no move generator of its own)."""

    game_id: str
    moves: tuple[str, ...]


def _seek(f: FieldReader, ack: AckId | None) -> Command:
    return SeekCommand(
        variant=f.string("variant", MAX_NAME_LENGTH),
        control=f.time_control("tc"),
        rated=bool(f.boolean("rated", required=False)),
        colour=f.choice("colour", ("first", "second", "random"), required=False) or "random",
        rating_range=f.rating_range("range"),
        manual=bool(f.boolean("manual", required=False)),
        ack=ack,
    )


def _match(f: FieldReader, ack: AckId | None) -> Command:
    return MatchCommand(
        to=f.string("to", MAX_NAME_LENGTH),
        variant=f.string("variant", MAX_NAME_LENGTH),
        control=f.time_control("tc"),
        rated=bool(f.boolean("rated", required=False)),
        colour=f.choice("colour", ("first", "second", "random"), required=False) or "random",
        ack=ack,
    )


def _challenge_ai(f: FieldReader, ack: AckId | None) -> Command:
    return ChallengeAiCommand(
        variant=f.string("variant", MAX_NAME_LENGTH),
        level=f.integer("level", MIN_LEVEL, MAX_LEVEL),
        control=f.time_control("tc"),
        colour=f.choice("colour", ("first", "second", "random"), required=False) or "random",
        ack=ack,
    )


def _game(f: FieldReader) -> str:
    value: str = f.string("game", GAME_ID_MAX_LENGTH)
    return value


def _offer(kind: OfferKind, action: OfferAction) -> Callable[[FieldReader, AckId | None], Command]:
    def parse(f: FieldReader, ack: AckId | None) -> Command:
        return OfferCommand(_game(f), kind, action, ack=ack)

    return parse


_PARSERS: dict[str, Callable[[FieldReader, AckId | None], Command]] = {
    "seek": _seek,
    "unseek": lambda f, a: UnseekCommand(f.integer("id", 1, MAX_ID, required=False), ack=a),
    "sought": lambda f, a: SoughtCommand(f.boolean("watch", required=False), ack=a),
    "who": lambda f, a: WhoCommand(ack=a),
    "play": lambda f, a: PlayCommand(f.integer("id", 1, MAX_ID), ack=a),
    "match": _match,
    "challenge_ai": _challenge_ai,
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
    "berserk": lambda f, a: BerserkCommand(_game(f), ack=a),
    "chat": lambda f, a: ChatCommand(_game(f), f.string("text", MAX_CHAT_LENGTH), ack=a),
    "premoves": lambda f, a: PremovesCommand(_game(f), f.move_lines("lines"), ack=a),
    "premoves_clear": lambda f, a: PremovesClearCommand(_game(f), ack=a),
    "premove_line": lambda f, a: PremoveLineCommand(_game(f), f.move_list("moves"), ack=a),
}
for _kind in ("draw", "takeback", "rematch"):
    for _action in ("offer", "accept", "decline"):
        _PARSERS[f"{_kind}_{_action}"] = _offer(_kind, _action)

COMMAND_TYPES: frozenset[str] = frozenset(_PARSERS)
"""Every hub command type name the protocol knows."""


def command_schema(kind: str) -> tuple[FieldSpec, ...]:
    """The payload fields of the hub command ``kind``, read off its parser in :data:`_PARSERS`
    (the one schema; ``scripts/gen_types.py`` turns it into the web client's types)."""
    return schema_of(kind, _PARSERS[kind])


_ENVELOPE_KEYS = frozenset({"t", "d", "a"})


@dataclass(frozen=True, slots=True)
class Envelope:
    """A frame whose shape is checked: ``kind`` is a string, ``payload`` an object, ``ack``
    valid or ``None``. What ``kind`` means is for the reader of the payload to say."""

    kind: str
    payload: Mapping[str, object]
    ack: AckId | None


def parse_envelope(obj: object) -> Envelope:
    """Check the envelope of any decoded frame (hub command or not).

    >>> parse_envelope({"t": "sought", "a": "x1"})
    Envelope(kind='sought', payload={}, ack='x1')

    :raises ProtocolError: not an object, unknown top-level key, ``t`` not a short string,
        ``a`` not a valid ack id, ``d`` neither an object nor ``null``.
    """
    if not isinstance(obj, dict):
        raise ProtocolError("a frame must be a JSON object")
    if len(obj) > 3 or not _ENVELOPE_KEYS.issuperset(obj):
        extra = sorted(shown(key) for key in set(obj) - _ENVELOPE_KEYS)
        raise ProtocolError(f"unknown frame key(s) {', '.join(extra)}")
    kind = obj.get("t")
    if not isinstance(kind, str) or not 0 < len(kind) <= MAX_TYPE_LENGTH or not valid_text(kind):
        raise ProtocolError(
            f"a frame needs a field 't' (the command type): a string of 1 to "
            f"{MAX_TYPE_LENGTH} characters"
        )
    ack = obj.get("a")
    if ack is not None and not valid_ack(ack):
        raise ProtocolError(
            f"'a' (ack id) must be an integer of at most 2**53 in magnitude or a string of 1 to "
            f"{MAX_ACK_LENGTH} characters"
        )
    payload = obj.get("d")
    if payload is None:
        payload = EMPTY_PAYLOAD
    elif not isinstance(payload, dict):
        raise ProtocolError(f"{kind}: 'd' must be an object")
    return Envelope(kind, payload, ack)


def time_control_from_json(value: object, where: str = "tc") -> TimeControl:
    """The time control of the protocol's ``tc`` object (``server.hub.clock.time_control_view``
    read back), with the same checks as every command's ``tc``.

    :raises ProtocolError: not a valid time control (``where`` names it in the message).
    """
    return FieldReader(where, {"tc": value}).time_control("tc")


def command_of(envelope: Envelope) -> Command:
    """Read a hub command out of a checked envelope with the command's schema.

    :raises ProtocolError: unknown type, missing/extra/wrong-typed field, value out of range.
    """
    parser = _PARSERS.get(envelope.kind)
    if parser is None:
        raise ProtocolError(f"unknown command type {shown(envelope.kind)}")
    fields = FieldReader(envelope.kind, envelope.payload)
    command = parser(fields, envelope.ack)
    fields.done()
    return command


def parse_command(obj: object) -> Command:
    """Validate a decoded JSON frame and build its command (:func:`parse_envelope`, then
    :func:`command_of`).

    >>> parse_command({"t": "move", "d": {"game": "g1", "ply": 3, "move": "c4c5+"}, "a": 9})
    MoveCommand(ack=9, game_id='g1', ply=3, move='c4c5+')

    :raises ProtocolError: unknown type, missing/extra/wrong-typed field, value out of range.
    """
    return command_of(parse_envelope(obj))


def ack_of(obj: object) -> AckId | None:
    """The ack id of a frame, if it has a valid one (to address the error of a bad frame)."""
    if isinstance(obj, dict):
        ack = obj.get("a")
        if valid_ack(ack):
            return cast(AckId, ack)
    return None


def bad_request(obj: object, error: ProtocolError) -> Message:
    """The ``error`` message answering a frame that :func:`parse_command` rejected."""
    return error_message(ProtocolError.code, str(error), ack_of(obj))

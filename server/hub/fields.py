"""The reader of a frame's payload: typed fields checked one by one, the protocol's limits, and
the schema a reader records (for the generated client types).

Every frame read by the hub (:mod:`server.hub.commands`) or the doors' own frames (login,
review, tournament) is read through a :class:`FieldReader`: each value is checked for its JSON
type and range before anything looks at it, text by the one rule of user text
(:mod:`server.hub.user_text`), and fields nobody asked for are refused. Errors are
:class:`~server.hub.errors.ProtocolError` naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from server.hub.errors import ProtocolError
from server.hub.messages import AckId
from server.hub.user_text import text_problem
from server.rules.time_control import (
    CLOCK_KINDS,
    CORRESPONDENCE_DAYS,
    Byoyomi,
    Correspondence,
    Fischer,
    TimeControl,
    Unlimited,
)

EMPTY_PAYLOAD: Mapping[str, object] = {}
"""The payload of a frame without ``d``."""


MAX_ACK_LENGTH = 64
MAX_NAME_LENGTH = 64
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
MIN_LEVEL = 1
MAX_LEVEL = 8
MAX_PREMOVE_LINES = 20
MAX_PREMOVE_PLIES = 20
"""A ``premoves`` command's limits: lines, and moves in a line (10 own replies); a
``premove_line`` request's moves are bounded by the same line length."""



# --- values ---------------------------------------------------------------------------------

MAX_TYPE_LENGTH = 32
"""A frame's ``t`` longer than this cannot name any command."""
MAX_SHOWN = 40
"""Characters of a refused value quoted back in an error message."""


def valid_text(value: str) -> bool:
    """Whether ``value`` may enter the server: encodable as UTF-8 (no lone surrogate, which a
    JSON ``\\ud800`` escape can produce) and without NUL (which PostgreSQL cannot store).

    >>> valid_text("e2e4"), valid_text("\\u00e9t\\u00e9"), valid_text("\\ud800"), valid_text("a\\x00")
    (True, True, False, False)
    """
    if "\x00" in value:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(value: object) -> str:
    """``repr(value)`` cut to :data:`MAX_SHOWN` characters, for quoting input in a message.

    ``repr`` escapes surrogates and control characters, so the result is always encodable.
    Arrays and objects are only named (their ``repr`` could be as deep as the input).
    """
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def valid_ack(ack: object) -> bool:
    if isinstance(ack, str):
        return 0 < len(ack) <= MAX_ACK_LENGTH and valid_text(ack)
    return isinstance(ack, int) and not isinstance(ack, bool) and abs(ack) <= MAX_ID


# --- field readers -------------------------------------------------------------------------------


class FieldReader:
    """Reads typed fields out of a payload and rejects fields nobody asked for.

    Every value is checked for its JSON type before anything else looks at it; ``null`` means
    "absent" for optional fields. Call :meth:`done` after the last field.
    """

    __slots__ = ("payload", "seen", "where")

    def __init__(self, where: str, payload: Mapping[str, object]) -> None:
        self.where = where
        self.payload = payload
        self.seen: set[str] = set()

    def _get(self, name: str, required: bool) -> object:
        self.seen.add(name)
        value = self.payload.get(name)
        if value is None:
            if required:
                raise ProtocolError(f"{self.where}: missing field {name!r}")
            return None
        return value

    def string(
        self, name: str, max_length: int, required: bool = True, *, secret: bool = False
    ) -> Any:
        """1 to ``max_length`` characters of user text (:mod:`server.hub.user_text`); a
        ``secret`` (password, token: shown to nobody) need only be valid Unicode without NUL."""
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ProtocolError(f"{self.where}: field {name!r} must be a string")
        if not value or len(value) > max_length:
            raise ProtocolError(
                f"{self.where}: field {name!r} must have 1 to {max_length} characters"
            )
        if not valid_text(value):
            raise ProtocolError(
                f"{self.where}: field {name!r} must be valid Unicode text without NUL"
            )
        problem = None if secret else text_problem(value)
        if problem is not None:
            raise ProtocolError(f"{self.where}: field {name!r} {problem}")
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
        if not isinstance(value, str) or value not in options:
            raise ProtocolError(
                f"{self.where}: field {name!r} must be one of {', '.join(map(repr, options))}"
            )
        return value

    def time_control(self, name: str) -> TimeControl:
        value = self._get(name, True)
        if not isinstance(value, Mapping):
            raise ProtocolError(f"{self.where}: field {name!r} must be an object")
        tc = FieldReader(f"{self.where}.{name}", value)
        kind = tc.choice("kind", CLOCK_KINDS)
        control: TimeControl
        if kind == "correspondence":
            days = tc.integer("days", CORRESPONDENCE_DAYS[0], CORRESPONDENCE_DAYS[-1])
            if days not in CORRESPONDENCE_DAYS:
                choices = ", ".join(map(str, CORRESPONDENCE_DAYS))
                raise ProtocolError(f"{tc.where}: field 'days' must be one of {choices}")
            control = Correspondence(days)
        elif kind == "unlimited":
            control = Unlimited()
        elif kind == "fischer":
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

    def move_lines(self, name: str) -> tuple[tuple[str, ...], ...]:
        """1 to :data:`MAX_PREMOVE_LINES` lists of an even number (2 to
        :data:`MAX_PREMOVE_PLIES`) of moves in the ``move`` command's notation."""
        value = self._get(name, True)
        where = f"{self.where}: field {name!r}"
        if not isinstance(value, list) or not 1 <= len(value) <= MAX_PREMOVE_LINES:
            raise ProtocolError(f"{where} must be a list of 1 to {MAX_PREMOVE_LINES} lines")
        lines = []
        for n, line in enumerate(value, 1):
            if (
                not isinstance(line, list)
                or not 2 <= len(line) <= MAX_PREMOVE_PLIES
                or len(line) % 2
            ):
                raise ProtocolError(
                    f"{where}: line {n} must be a list of 2 to {MAX_PREMOVE_PLIES} moves, "
                    "an even number (opponent's move, your reply, …)"
                )
            for ply, move in enumerate(line, 1):
                _check_move(move, f"{where}: line {n}, move {ply}")
            lines.append(tuple(line))
        return tuple(lines)

    def move_list(self, name: str) -> tuple[str, ...]:
        """0 to :data:`MAX_PREMOVE_PLIES` moves in the ``move`` command's notation."""
        value = self._get(name, True)
        where = f"{self.where}: field {name!r}"
        if not isinstance(value, list) or len(value) > MAX_PREMOVE_PLIES:
            raise ProtocolError(f"{where} must be a list of 0 to {MAX_PREMOVE_PLIES} moves")
        for ply, move in enumerate(value, 1):
            _check_move(move, f"{where}: move {ply}")
        return tuple(value)

    def done(self) -> None:
        if len(self.payload) > len(self.seen) or not self.seen.issuperset(self.payload):
            unknown = sorted(shown(key) for key in set(self.payload) - self.seen)
            raise ProtocolError(f"{self.where}: unknown field(s) {', '.join(unknown)}")


def _check_move(move: object, where: str) -> None:
    """A move of a line (``premoves``, ``premove_line``): user text of 1 to
    :data:`MAX_MOVE_LENGTH` characters (whether it is a move is for the game to say)."""
    if (
        not isinstance(move, str)
        or not 0 < len(move) <= MAX_MOVE_LENGTH
        or not valid_text(move)
        or text_problem(move) is not None
    ):
        raise ProtocolError(f"{where} must be a move of 1 to {MAX_MOVE_LENGTH} characters")


@dataclass(frozen=True)
class FieldSpec:
    """One field of a command's payload, as its parser reads it (for generated client types)."""

    name: str
    kind: Literal[
        "string",
        "integer",
        "boolean",
        "choice",
        "time_control",
        "rating_range",
        "move_lines",
        "move_list",
    ]
    required: bool
    options: tuple[str, ...] = ()


class _SchemaReader(FieldReader):
    """A :class:`FieldReader` that records the fields a parser asks for, with stand-in values."""

    __slots__ = ("fields",)

    def __init__(self, where: str) -> None:
        super().__init__(where, EMPTY_PAYLOAD)
        self.fields: list[FieldSpec] = []

    def string(
        self, name: str, max_length: int, required: bool = True, *, secret: bool = False
    ) -> Any:
        self.fields.append(FieldSpec(name, "string", required))
        return "x"

    def integer(self, name: str, low: int, high: int, required: bool = True) -> Any:
        self.fields.append(FieldSpec(name, "integer", required))
        return low

    def boolean(self, name: str, required: bool = True) -> Any:
        self.fields.append(FieldSpec(name, "boolean", required))
        return False

    def choice(self, name: str, options: tuple[str, ...], required: bool = True) -> Any:
        self.fields.append(FieldSpec(name, "choice", required, options))
        return options[0]

    def time_control(self, name: str) -> TimeControl:
        self.fields.append(FieldSpec(name, "time_control", True))
        return Fischer.from_seconds(MIN_FISCHER_BASE_S, 0)

    def rating_range(self, name: str) -> tuple[int, int] | None:
        self.fields.append(FieldSpec(name, "rating_range", False))
        return None

    def move_lines(self, name: str) -> tuple[tuple[str, ...], ...]:
        self.fields.append(FieldSpec(name, "move_lines", True))
        return ()

    def move_list(self, name: str) -> tuple[str, ...]:
        self.fields.append(FieldSpec(name, "move_list", True))
        return ()


def schema_of(kind: str, parser: Callable[[FieldReader, AckId | None], object]) -> tuple[FieldSpec, ...]:
    """The payload fields ``parser`` reads (any frame read with a :class:`FieldReader`)."""
    reader = _SchemaReader(kind)
    parser(reader, None)
    return tuple(reader.fields)



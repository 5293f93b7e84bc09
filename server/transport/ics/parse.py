"""Reading what an ICS client types: command words, seek/match terms and moves.

Pure functions, no state: :func:`split_command` resolves a line's command word (exact name,
alias or unique prefix, as FICS does), :func:`parse_terms` reads the game terms of ``seek`` and
``match``, :func:`move_to_uci` turns a move typed the FICS way into the engine's coordinate form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from server.hub.commands import ColourChoice
from server.hub.fields import (
    MAX_BASE_S,
    MAX_INCREMENT_S,
    MAX_PERIOD_S,
    MAX_PERIODS,
    MAX_RATING,
    MIN_FISCHER_BASE_S,
)
from server.rules import InvalidMoveError, Position
from server.rules.san import parse_san
from server.rules.time_control import (
    CORRESPONDENCE_DAYS,
    Byoyomi,
    Correspondence,
    Fischer,
    TimeControl,
    Unlimited,
)
from server.transport.ics.variants import ICS_VARIANTS, IcsVariant, variant_by_word

__all__ = [
    "COMMANDS",
    "CommandLine",
    "Terms",
    "TermsError",
    "looks_like_move",
    "move_to_uci",
    "parse_terms",
    "split_command",
]

COMMANDS = (
    "abort",
    "accept",
    "adjourn",
    "alias",
    "analysis",
    "analyze",
    "backward",
    "computer",
    "date",
    "decline",
    "draw",
    "examine",
    "finger",
    "flag",
    "forward",
    "games",
    "help",
    "history",
    "iset",
    "kibitz",
    "match",
    "moves",
    "mygames",
    "observe",
    "password",
    "pending",
    "play",
    "primary",
    "quit",
    "refresh",
    "rematch",
    "resign",
    "revert",
    "say",
    "seek",
    "set",
    "smoves",
    "sought",
    "style",
    "takeback",
    "tell",
    "tjoin",
    "tourneys",
    "tpause",
    "tstandings",
    "twithdraw",
    "unalias",
    "unexamine",
    "unobserve",
    "unseek",
    "whisper",
    "who",
    "withdraw",
)
"""Every command word (docs/ics.md describes each)."""

ALIASES = {
    "exit": "quit",
    "bye": "quit",
    "logout": "quit",
    "t": "tell",
    "k": "kibitz",
    "obs": "observe",
    "unobs": "unobserve",
    "fo": "forward",
    "ba": "backward",
    "exam": "examine",
    "unex": "unexamine",
    "hist": "history",
    "fi": "finger",
    "?": "help",
    "analyse": "analyze",
}


QUIET = ("gameend",)
"""Words XBoard sends that FICS takes without an answer (XBoard's zippy player sends
``gameend`` after each game); matched whole only, so they make no prefix ambiguous."""


@dataclass(frozen=True)
class CommandLine:
    """A resolved command: its name and the rest of the line (``args``, stripped)."""

    name: str
    args: str

    @property
    def words(self) -> list[str]:
        return self.args.split()


def split_command(line: str) -> CommandLine | str:
    """The command a line names, or an error text (FICS wording) when it names none.

    >>> split_command("obs 12")
    CommandLine(name='observe', args='12')
    >>> split_command("s")
    'Ambiguous command "s". Matches: say seek set smoves sought style'
    """
    word, _, rest = line.strip().partition(" ")
    lower = word.lower()
    if lower in COMMANDS:
        return CommandLine(lower, rest.strip())
    if lower in ALIASES:
        return CommandLine(ALIASES[lower], rest.strip())
    if lower in QUIET:
        return CommandLine(lower, rest.strip())
    matches = [name for name in COMMANDS if name.startswith(lower)] if lower else []
    if len(matches) == 1:
        return CommandLine(matches[0], rest.strip())
    if matches:
        return f'Ambiguous command "{word}". Matches: {" ".join(matches)}'
    return f"{word}: Command not found."


# ----------------------------------------------------------------------------------- terms


class TermsError(ValueError):
    """Seek or match terms that cannot be read; the message is shown to the player."""


@dataclass(frozen=True)
class Terms:
    """The game terms typed after ``seek`` or ``match <name>``."""

    ics: IcsVariant
    control: TimeControl
    rated: bool
    colour: ColourChoice
    rating_range: tuple[int, int] | None
    manual: bool


_RANGE = re.compile(r"^(\d{1,4})-(\d{1,4})$")
_BYOYOMI = re.compile(r"^byo(?:yomi)?(?:/(\d{1,2}))?$")
_DAYS = re.compile(r"^(\d{1,3})d$")
DEFAULT_MINUTES = 2
DEFAULT_INCREMENT = 12
DEFAULT_VARIANT = "spartan"


def parse_terms(words: list[str], default_variant: str = DEFAULT_VARIANT) -> Terms:
    """Read ``[time inc] [rated|unrated] [white|black] [variant] [min-max] [auto|manual]``.

    ``time`` is in minutes, ``inc`` in seconds (FICS). For the shogi variants the word
    ``byoyomi`` (or ``byoyomi/N`` for N periods) makes ``inc`` the byoyomi period in seconds.
    ``wild 1`` may be written as two words. A correspondence game is ``Nd`` instead of the
    times (N days per move: 1, 2, 3, 5, 7, 10 or 14), or ``unlimited`` (no clock).

    >>> t = parse_terms("3 0 u w1".split())
    >>> (t.ics.name, t.control.base_ms, t.rated)
    ('wildcastle', 180000, False)

    :raises TermsError: a word that is none of these, or times out of range.
    """
    numbers: list[int] = []
    rated = False
    colour: ColourChoice = "random"
    rating_range: tuple[int, int] | None = None
    manual = False
    ics: IcsVariant | None = None
    periods: int | None = None
    correspondence: TimeControl | None = None
    index = 0
    while index < len(words):
        word = words[index].lower()
        index += 1
        byoyomi = _BYOYOMI.match(word)
        days = _DAYS.match(word) if word.isascii() else None
        found = variant_by_word(word)
        if word.isascii() and word.isdigit() and len(word) <= 6:
            numbers.append(int(word))
        elif days is not None:
            if int(days.group(1)) not in CORRESPONDENCE_DAYS:
                choices = ", ".join(map(str, CORRESPONDENCE_DAYS))
                raise TermsError(f"Days per move are {choices} (for example 3d).")
            correspondence = Correspondence(int(days.group(1)))
        elif word in ("unlimited", "unl"):
            correspondence = Unlimited()
        elif word in ("r", "rated"):
            rated = True
        elif word in ("u", "unrated"):
            rated = False
        elif word in ("w", "white"):
            colour = "first"
        elif word in ("b", "black"):
            colour = "second"
        elif word in ("m", "manual"):
            manual = True
        elif word in ("a", "auto"):
            manual = False
        elif word in ("f", "formula"):
            pass  # FICS formulas are not supported; accepted and ignored
        elif byoyomi:
            periods = int(byoyomi.group(1) or 1)
        elif word == "wild" and index < len(words):
            found = variant_by_word("wild/" + words[index])
            index += 1
            if found is None:
                raise TermsError(f'There is no such wild variant "{words[index - 1]}".')
            ics = found
        elif found is not None:
            ics = found
        elif _RANGE.match(word):
            low, high = (int(x) for x in word.split("-"))
            if not 0 <= low <= high <= MAX_RATING:
                raise TermsError(f"Invalid rating range {word}.")
            rating_range = (low, high)
        else:
            names = ", ".join(v.kind for v in ICS_VARIANTS)
            raise TermsError(f'Unknown seek/match term "{words[index - 1]}". Variants: {names}.')
    if len(numbers) > 2:
        raise TermsError("Give at most two numbers: the time in minutes and the increment.")
    if correspondence is not None and (numbers or periods is not None):
        raise TermsError("A correspondence game has days per move (3d) or none, not minutes.")
    if ics is None:
        ics = variant_by_word(default_variant)
        assert ics is not None
    minutes = numbers[0] if numbers else DEFAULT_MINUTES
    second = numbers[1] if len(numbers) > 1 else (0 if numbers else DEFAULT_INCREMENT)
    control = correspondence or _control(minutes, second, periods)
    return Terms(ics, control, rated, colour, rating_range, manual)


def _control(minutes: int, second: int, periods: int | None) -> TimeControl:
    if periods is not None:
        if minutes * 60 > MAX_BASE_S or not 1 <= second <= MAX_PERIOD_S:
            raise TermsError(
                f"Byoyomi needs a main time of at most {MAX_BASE_S // 60} minutes and a "
                f"period of 1 to {MAX_PERIOD_S} seconds."
            )
        if not 1 <= periods <= MAX_PERIODS:
            raise TermsError(f"Byoyomi has 1 to {MAX_PERIODS} periods.")
        return Byoyomi.from_seconds(minutes * 60, second, periods)
    if not MIN_FISCHER_BASE_S <= minutes * 60 <= MAX_BASE_S or not 0 <= second <= MAX_INCREMENT_S:
        raise TermsError(
            f"Invalid time control: 1 to {MAX_BASE_S // 60} minutes and an increment of 0 to "
            f"{MAX_INCREMENT_S} seconds."
        )
    return Fischer.from_seconds(minutes * 60, second)


# ----------------------------------------------------------------------------------- moves

_COORDINATE = re.compile(r"^([a-o])(\d{1,2})-?([a-o])(\d{1,2})(==|=\+|=[a-zA-Z]|=|\+|[a-zA-Z])?$")
_DROP = re.compile(r"^([A-Za-z])[@*]([a-o]\d{1,2})$")
_MOVELIKE = re.compile(
    r"^(?:[a-o]\d{1,2}-?[a-o]\d{1,2}\S*|[A-Za-z][@*][a-o]\d{1,2}|[oO0]-[oO0](?:-[oO0])?[+#]?"
    r"|[KQRBNPWGLCH]?[a-o]?\d{0,2}x?[a-o]\d{1,2}(?:=?[A-Za-z])?[+#]?)$"
)


def looks_like_move(text: str) -> bool:
    """Whether a typed word has the shape of a move (so it is not an unknown command)."""
    return bool(_MOVELIKE.match(text.strip()))


def move_to_uci(text: str, position: Position, ics: IcsVariant) -> str:
    """The engine's coordinate form of a move typed as on FICS, in ``position``.

    Accepted: coordinates (``e2e4``, ``e2-e4``), promotions ``e7e8=q`` / ``e7e8q`` and, for the
    shogi family, ``c4c5+`` / ``c4c5=+`` (``c4c5==`` declines), drops ``P@c3`` (any case,
    ``P*c3`` too), castling ``o-o`` / ``O-O-O`` and SAN (``Nf3``, ``exd5``, ``e8=Q``) in the chess
    family. Legality is the hub's business; SAN needs the legal moves to be read at all.

    :raises RulesError: not a move (``InvalidMoveError``) or SAN naming no legal move.
    """
    move = text.strip()
    drop = _DROP.match(move)
    if drop:
        symbol = ics.symbol(drop.group(1))
        if symbol is None:
            raise InvalidMoveError(f"there is no piece {drop.group(1)!r} to drop")
        return f"{symbol}@{drop.group(2)}"
    coordinate = _COORDINATE.match(move)
    shogi = position.variant.family == "shogi"
    if coordinate:
        origin, target = (
            coordinate.group(1) + coordinate.group(2),
            coordinate.group(3) + coordinate.group(4),
        )
        suffix = (coordinate.group(5) or "").lstrip("=")
        if suffix in ("", "="):
            return origin + target
        if suffix == "+" or (shogi and suffix):
            return origin + target + "+"
        symbol = ics.symbol(suffix)
        if symbol is None:
            raise InvalidMoveError(f"there is no piece {suffix!r} to promote to")
        return origin + target + symbol.lower()
    if shogi:
        raise InvalidMoveError(f"{move!r} is not a move (type it like c4c5, c4c5+ or P@c3)")
    return position.uci(parse_san(position, move))

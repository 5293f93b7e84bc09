"""The arguments typed after an ICS command, checked before anything is looked up or sent.

Every argument that names something (a game id, a player, a number) is read here; one that
cannot name anything is answered in FICS's words (``There is no such game.``, ``'x' is not a
valid handle.``) and goes no further: it never reaches the store or the hub.
"""

from __future__ import annotations

import re

from server.hub.fields import MAX_NAME_LENGTH
from server.hub.game_ids import GAME_ID_PATTERN

__all__ = [
    "NO_SUCH_GAME",
    "TAKES_NO_ARGUMENT",
    "bad_arg",
    "bad_handle",
    "cut",
    "game_id_arg",
    "handle_arg",
    "number",
]

NO_SUCH_GAME = "There is no such game."
MAX_NUMBER_DIGITS = 12
SHOWN = 40
"""How much of a refused argument an answer quotes."""

_GAME_ID = re.compile(rf"#?({GAME_ID_PATTERN.pattern})")
_HANDLE = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_NAME_LENGTH}}}")
_DIGITS = re.compile(rf"[0-9]{{1,{MAX_NUMBER_DIGITS}}}")

TAKES_NO_ARGUMENT = frozenset(
    {
        "abort",
        "date",
        "draw",
        "flag",
        "pending",
        "quit",
        "rematch",
        "revert",
        "takeback",
        "unexamine",
    }
)
"""Commands refused when something follows them (``quit now`` does not log out): an unread
word would otherwise be taken as consent to an act. ``resign`` may name the opponent."""


def number(text: str) -> int | None:
    """The number a command argument starts with (ASCII digits only), if any.

    >>> number("12 more"), number("²"), number("-3")
    (12, None, None)
    """
    words = text.split()
    return int(words[0]) if words and _DIGITS.fullmatch(words[0]) else None


def game_id_arg(word: str) -> str | None:
    """The game id ``word`` (``Xq3fT0aa`` or ``#Xq3fT0aa``) can be, or None.

    >>> game_id_arg("#Xq3fT0aa"), game_id_arg("../../etc/passwd"), game_id_arg("%s%s%n")
    ('Xq3fT0aa', None, None)
    """
    match = _GAME_ID.fullmatch(word)
    return match.group(1) if match else None


def handle_arg(word: str) -> str | None:
    """``word`` if it can be a player's name (a FICS handle), else None."""
    return word if _HANDLE.fullmatch(word) else None


def bad_handle(word: str) -> str:
    """FICS's answer to a name no player can have."""
    return f"'{cut(word)}' is not a valid handle."


def cut(text: str) -> str:
    """An argument as an answer repeats it: at most :data:`SHOWN` characters."""
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}..."


def bad_arg(text: str) -> str:
    """A refused argument quoted in an answer (cut to :data:`SHOWN` characters)."""
    return f'"{cut(text)}"'

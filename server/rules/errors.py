"""Exceptions raised by the adjudicator. Messages are written for players."""


class RulesError(ValueError):
    """Base class of every error the adjudicator raises."""


class InvalidMoveError(RulesError):
    """The move text cannot be parsed (e.g. ``"z9z9"``, ``"hello"``)."""


class IllegalMoveError(RulesError):
    """The move is well formed but not legal in the position (the message says why)."""


class InvalidFenError(RulesError):
    """A FEN/SFEN string does not describe a valid position of the variant."""

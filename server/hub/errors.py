"""Errors of the hub core.

:class:`ProtocolError` means a client frame is malformed (unknown type, missing or wrong-typed field).
:class:`CommandError` means a well-formed command was refused (not your turn, seek limit reached, ...);
the hub turns it into an ``error`` message for the client and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ProtocolError(ValueError):
    """A decoded client frame does not follow docs/protocol.md.

    ``code`` is always ``"bad_request"``; the message names the offending field.
    """

    code = "bad_request"


class CommandError(Exception):
    """A command that the hub refuses.

    :param code: stable machine-readable reason (documented in docs/protocol.md).
    :param message: a sentence a player can read.
    :param extra: additional JSON-ready fields for the error payload (e.g. the current game state).
    """

    def __init__(self, code: str, message: str, extra: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra: dict[str, Any] = dict(extra or {})

"""Server-to-client messages.

A :class:`Message` is the JSON object ``{"t": type, "d": payload, "v": version, "a": ack_id}`` as a
frozen record; ``v`` (room event version) and ``a`` (the acknowledged client ack id) are omitted from
the wire form when they are ``None``. Payloads are JSON-ready values (dicts, lists, str, int, bool,
None) and must be treated as read-only: a broadcast shares one payload between all recipients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.hub.errors import ErrorCode

AckId = int | str
"""Client-chosen id echoed in the ``ack`` or ``error`` answering its command."""

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class Message:
    """One server-to-client message."""

    t: str
    d: JsonObject
    v: int | None = None
    a: AckId | None = None

    def to_json_obj(self) -> JsonObject:
        """Return the wire form, ready for ``json.dumps``.

        >>> Message("ack", {}, a=7).to_json_obj()
        {'t': 'ack', 'd': {}, 'a': 7}
        """
        obj: JsonObject = {"t": self.t, "d": self.d}
        if self.v is not None:
            obj["v"] = self.v
        if self.a is not None:
            obj["a"] = self.a
        return obj


def ack_message(ack: AckId | None, data: JsonObject | None = None) -> Message:
    """The positive answer to a command that carried ``ack``."""
    return Message("ack", data or {}, a=ack)


def error_message(
    code: ErrorCode,
    text: str | None = None,
    ack: AckId | None = None,
    extra: JsonObject | None = None,
) -> Message:
    """The negative answer to a command: ``{"t": "error", "d": {"code", "message", ...}}``;
    ``text`` defaults to the code's own."""
    payload: JsonObject = {"code": code, "message": code.text if text is None else text}
    if extra:
        payload.update(extra)
    return Message("error", payload, a=ack)

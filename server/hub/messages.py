"""Server-to-client messages.

A :class:`Message` is the JSON object ``{"t": type, "d": payload, "v": version, "a": ack_id}`` as a
frozen record; ``v`` (room event version) and ``a`` (the acknowledged client ack id) are omitted from
the wire form when they are ``None``. Payloads are JSON-ready values (dicts, lists, str, int, bool,
None) and must be treated as read-only: a broadcast shares one payload between all recipients.
Each kind's payload has one schema, a ``TypedDict`` in :mod:`server.hub.payloads`, which the code
building it is annotated with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, NotRequired, TypedDict

from server.hub.errors import ErrorCode

if TYPE_CHECKING:  # payloads imports MessageKind from here
    from server.hub.payloads import AckPayload, ErrorPayload, RoomStateView

AckId = int | str
"""Client-chosen id echoed in the ``ack`` or ``error`` answering its command."""

Payload = Mapping[str, object]
"""A message's ``d``: read-only, one of :mod:`server.hub.payloads`' ``TypedDict`` (every one is a
``Mapping[str, object]``). Which one depends on the value of ``t``, which a type cannot say, so
a reader of a ``Message`` it did not build narrows the fields it reads (``isinstance``); the
builders annotate the payload with its ``TypedDict``, which mypy checks."""


class MessageJson(TypedDict):
    """A message's wire form (:meth:`Message.to_json_obj`)."""

    t: str
    d: Payload
    v: NotRequired[int]
    a: NotRequired[AckId]


class MessageKind:
    """Every kind (``t``) of server-to-client message, listed once: docs/protocol.md's "Messages"
    table lists the same (``tests/test_vocabulary.py``), web/src/protocol.gen.ts is generated
    from it (``scripts/gen_types.py``).

    The kinds are plain ``str`` constants, not an enum: messages are encoded on the move path,
    and orjson writes an enum member about 0.5 µs slower per message than a ``str``
    (1.04 → 1.57 µs for a ``move``). :func:`message_kinds` lists them.
    """

    # answers to a command
    ACK: Final = "ack"
    ERROR: Final = "error"
    # session (transport, cluster)
    WELCOME: Final = "welcome"
    HELLO: Final = "hello"
    DEGRADED: Final = "degraded"
    PONG: Final = "pong"
    # lobby
    SOUGHT: Final = "sought"
    WHO: Final = "who"
    SEEK_ADDED: Final = "seek_added"
    SEEK_REMOVED: Final = "seek_removed"
    CHALLENGE: Final = "challenge"
    CHALLENGE_ACCEPTED: Final = "challenge_accepted"
    CHALLENGE_DECLINED: Final = "challenge_declined"
    CHALLENGE_WITHDRAWN: Final = "challenge_withdrawn"
    CHALLENGE_CANCELLED: Final = "challenge_cancelled"
    GAME_START: Final = "game_start"
    COMPUTER_GAME: Final = "computer_game"
    # room events (and the room snapshot ``game``)
    GAME: Final = "game"
    MOVE: Final = "move"
    TAKEBACK: Final = "takeback"
    OFFER: Final = "offer"
    END: Final = "end"
    GONE: Final = "gone"
    BACK: Final = "back"
    CHAT: Final = "chat"
    REMATCH: Final = "rematch"
    BERSERK: Final = "berserk"
    # a player's own conditional premoves (to that player only)
    PREMOVES: Final = "premoves"
    PREMOVE_LINE: Final = "premove_line"  # the answer to the read-only request of that name
    # review
    GAMES: Final = "games"
    MY_GAMES: Final = "my_games"
    MY_GAME: Final = "my_game"
    MAIL_SETTINGS: Final = "mail_settings"
    REVIEW: Final = "review"
    EXPORT: Final = "export"
    ANALYSE: Final = "analyse"
    ANALYSIS: Final = "analysis"
    # tournaments
    TOURNAMENT: Final = "tournament"
    TOURNAMENTS: Final = "tournaments"
    TOURNAMENT_STANDINGS: Final = "tournament_standings"
    TOURNAMENT_ROUND: Final = "tournament_round"
    # bus publication only (channel ``games``), never sent to a client
    GAME_END: Final = "game_end"


def message_kinds() -> dict[str, str]:
    """Every message kind: attribute name -> wire spelling."""
    return {
        name: value
        for name, value in vars(MessageKind).items()
        if name.isupper() and isinstance(value, str)
    }


@dataclass(frozen=True)
class Message:
    """One server-to-client message."""

    t: str
    d: Payload
    v: int | None = None
    a: AckId | None = None

    def to_json_obj(self) -> MessageJson:
        """Return the wire form, ready for ``json.dumps``.

        >>> Message("ack", {}, a=7).to_json_obj()
        {'t': 'ack', 'd': {}, 'a': 7}
        """
        obj: MessageJson = {"t": self.t, "d": self.d}
        if self.v is not None:
            obj["v"] = self.v
        if self.a is not None:
            obj["a"] = self.a
        return obj


def ack_message(ack: AckId | None, data: AckPayload | None = None) -> Message:
    """The positive answer to a command that carried ``ack``."""
    return Message(MessageKind.ACK, data or {}, a=ack)


def error_message(
    code: ErrorCode,
    text: str | None = None,
    ack: AckId | None = None,
    state: RoomStateView | None = None,
) -> Message:
    """The negative answer to a command: ``{"t": "error", "d": {"code", "message", "state"?}}``
    (``state``: the room's, after a refused or unsaved room command); ``text`` defaults to the
    code's own."""
    payload: ErrorPayload = {"code": code, "message": code.text if text is None else text}
    if state is not None:
        payload["state"] = state
    return Message(MessageKind.ERROR, payload, a=ack)

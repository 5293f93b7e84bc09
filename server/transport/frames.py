"""Transport-level client frames: authentication and logout.

These frames share the hub's envelope ``{"t": type, "d": payload, "a": ack_id}`` but are handled
by the transport, not the hub, because they establish *who* a connection is:

* ``{"t": "register", "d": {"name": ..., "password": ...}}``
* ``{"t": "login", "d": {"name": ..., "password": ...}}``
* ``{"t": "guest"}``
* ``{"t": "resume", "d": {"token": ...}}`` — a session token from an earlier ``welcome``
* ``{"t": "logout"}`` — end the session and close the connection
* ``{"t": "logout_everywhere"}`` — end every session of the player (every device) and close
  the player's connections, this one included
* ``{"t": "change_password", "d": {"old": ..., "new": ...}}`` — a new password; the player's
  other sessions end (their connections close), this one goes on
* ``{"t": "ping"}`` — the application heartbeat, answered at once with ``{"t": "pong"}`` (before
  or after login): a browser cannot send websocket pings, so this is how it notices a dead
  connection

Every other type is a hub command (:func:`server.hub.commands.command_of`) or a review command
(:mod:`server.transport.review`). The envelope of every frame is checked first, in one place
(:func:`server.hub.commands.parse_envelope`), and the fields here are read with the hub's own
:class:`~server.hub.commands.FieldReader`, so every frame is refused the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.hub.commands import Envelope, FieldReader
from server.hub.messages import AckId

MAX_FIELD = 256


@dataclass(frozen=True)
class AuthFrame:
    """Base of the transport's own frames."""

    ack: AckId | None


@dataclass(frozen=True)
class RegisterFrame(AuthFrame):
    name: str
    password: str


@dataclass(frozen=True)
class LoginFrame(AuthFrame):
    name: str
    password: str


@dataclass(frozen=True)
class GuestFrame(AuthFrame):
    pass


@dataclass(frozen=True)
class ResumeFrame(AuthFrame):
    token: str


@dataclass(frozen=True)
class LogoutFrame(AuthFrame):
    pass


@dataclass(frozen=True)
class LogoutEverywhereFrame(AuthFrame):
    pass


@dataclass(frozen=True)
class ChangePasswordFrame(AuthFrame):
    old: str
    new: str


@dataclass(frozen=True)
class PingFrame(AuthFrame):
    pass


AUTH_FRAME_FIELDS: dict[str, tuple[str, ...]] = {
    "register": ("name", "password"),
    "login": ("name", "password"),
    "guest": (),
    "resume": ("token",),
    "logout": (),
    "logout_everywhere": (),
    "change_password": ("old", "new"),
    "ping": (),
}
"""The frame types the transport handles itself, and their (string) fields."""


SECRET_FIELDS = frozenset({"password", "token"})
"""Fields nobody is shown: any valid Unicode text (a password may hold what it likes); the
others (``name``) are user text (:mod:`server.hub.user_text`)."""


def _strings(envelope: Envelope, *names: str) -> list[str]:
    fields = FieldReader(envelope.kind, envelope.payload)
    values = [fields.string(name, MAX_FIELD, secret=name in SECRET_FIELDS) for name in names]
    fields.done()
    return values


def parse_transport_frame(envelope: Envelope) -> AuthFrame | None:
    """The transport frame in a checked envelope, or ``None`` for any other type.

    >>> from server.hub.commands import parse_envelope
    >>> parse_transport_frame(parse_envelope({"t": "resume", "d": {"token": "abc"}, "a": 1}))
    ResumeFrame(ack=1, token='abc')
    >>> parse_transport_frame(parse_envelope({"t": "seek"})) is None
    True

    :raises ProtocolError: a transport frame with missing, extra or wrong-typed fields.
    """
    kind, ack = envelope.kind, envelope.ack
    names = AUTH_FRAME_FIELDS.get(kind)
    if names is None:
        return None
    values = _strings(envelope, *names)
    if kind == "register":
        return RegisterFrame(ack, *values)
    if kind == "login":
        return LoginFrame(ack, *values)
    if kind == "resume":
        return ResumeFrame(ack, *values)
    if kind == "ping":
        return PingFrame(ack)
    if kind == "change_password":
        return ChangePasswordFrame(ack, *values)
    if kind == "logout_everywhere":
        return LogoutEverywhereFrame(ack)
    return GuestFrame(ack) if kind == "guest" else LogoutFrame(ack)

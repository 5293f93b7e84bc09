"""One incoming client frame, read once into one typed value: :func:`read_frame`.

Every decoded frame of a client (``{"t": type, "d": payload, "a": ack_id}``, docs/protocol.md)
is one of three kinds, and :func:`read_frame` tells which after checking its envelope
(:func:`~server.hub.commands.parse_envelope`) and its fields (the one
:class:`~server.hub.commands.FieldReader`), so that a door dispatches once on what it gets:

* a hub :class:`~server.hub.commands.Command` (``move``, ``seek`` …: the ``_PARSERS`` schemas
  of :mod:`server.hub.commands`), which the door hands to the hub;
* an :class:`AuthFrame`: who a connection is, handled by the door itself —

  * ``{"t": "register", "d": {"name": ..., "password": ...}}``
  * ``{"t": "login", "d": {"name": ..., "password": ...}}``
  * ``{"t": "guest"}``
  * ``{"t": "resume", "d": {"token": ...}}`` — a session token from an earlier ``welcome``
  * ``{"t": "logout"}`` — end the session and close the connection
  * ``{"t": "logout_everywhere"}`` — end every session of the player (every device) and close
    the player's connections, this one included
  * ``{"t": "change_password", "d": {"old": ..., "new": ...}}`` — a new password; the
    player's other sessions end (their connections close), this one goes on
  * ``{"t": "ping"}`` — the application heartbeat, answered at once with ``{"t": "pong"}``
    (before or after login): a browser cannot send websocket pings, so this is how it
    notices a dead connection;

* an :class:`AccountFrame`: the logged-in player's own things, answered by the door from the
  store (``server.transport.notify``) —

  * ``{"t": "my_games"}`` — the player's running games, those where it is their move first
    (answered by ``my_games``)
  * ``{"t": "mail_settings", "d": {"email": ..., "opt_in": ..., "forget": ...}}`` — every
    field optional: with none, the settings are read; ``email`` sets the address (checked by
    :func:`server.hub.mail_address.email_problem`), ``opt_in`` turns the mails on or off,
    ``forget: true`` deletes the address (and so the mails); answered by ``mail_settings``

* a typed :class:`~server.hub.review_requests.ReviewRequest` (``games``, ``review``,
  ``export``, ``analysis``, ``analyse``: :data:`REVIEW_COMMAND_TYPES`), answered from the store
  (``server.transport.review``); its fields are read by
  :func:`~server.hub.review_requests.review_request`, the schema through which the HTTP review
  API reads its query strings too.
* a :class:`~server.hub.tournament_requests.TournamentRequest` (``tournament_*``:
  :data:`~server.hub.tournament_requests.TOURNAMENT_REQUEST_TYPES`), read here with its schema
  and answered by the tournament director (``server.app.tournaments``).

Anything else raises the one :class:`~server.hub.errors.ProtocolError`, whose ``ack`` is the
frame's ack id (when valid) for the door to echo. Pure and sans-I/O, like the commands.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.hub.commands import Command, Envelope, ack_of, command_of, parse_envelope
from server.hub.errors import ProtocolError
from server.hub.fields import FieldReader
from server.hub.mail_address import MAX_EMAIL, email_problem
from server.hub.messages import AckId
from server.hub.review_requests import REVIEW_TYPES, ReviewRequest, review_request
from server.hub.tournament_requests import (
    TOURNAMENT_REQUEST_TYPES,
    TournamentRequest,
    tournament_request_of,
)

__all__ = [
    "ACCOUNT_COMMAND_TYPES",
    "AUTH_FRAME_FIELDS",
    "REVIEW_COMMAND_TYPES",
    "AccountFrame",
    "AuthFrame",
    "ChangePasswordFrame",
    "GuestFrame",
    "Incoming",
    "LoginFrame",
    "LogoutEverywhereFrame",
    "LogoutFrame",
    "MailSettingsFrame",
    "MyGamesFrame",
    "PingFrame",
    "RegisterFrame",
    "ResumeFrame",
    "ReviewRequest",
    "TournamentRequest",
    "read_frame",
]

MAX_FIELD = 256
"""Longest field of an authentication frame (a name, a password, a token)."""


@dataclass(frozen=True)
class AuthFrame:
    """Base of the frames a door handles itself: who a connection is, and the heartbeat."""

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
"""The authentication frame types, and their (string) fields."""

SECRET_FIELDS = frozenset({"password", "token"})
"""Fields nobody is shown: any valid Unicode text (a password may hold what it likes); the
others (``name``) are user text (:mod:`server.hub.user_text`)."""

_AUTH_TYPES: dict[str, type[AuthFrame]] = {
    "register": RegisterFrame,
    "login": LoginFrame,
    "guest": GuestFrame,
    "resume": ResumeFrame,
    "logout": LogoutFrame,
    "logout_everywhere": LogoutEverywhereFrame,
    "change_password": ChangePasswordFrame,
    "ping": PingFrame,
}

REVIEW_COMMAND_TYPES: frozenset[str] = REVIEW_TYPES
"""Frame types answered from the store (``server.transport.review.review_ws``), not by the hub."""


ACCOUNT_COMMAND_TYPES: frozenset[str] = frozenset({"my_games", "mail_settings"})
"""Frame types about the player's own account (:class:`AccountFrame`), answered by the door."""


@dataclass(frozen=True)
class AccountFrame:
    """Base of the frames about the logged-in player's own account."""

    ack: AckId | None


@dataclass(frozen=True)
class MyGamesFrame(AccountFrame):
    pass


@dataclass(frozen=True)
class MailSettingsFrame(AccountFrame):
    """``None``: leave as it is. ``forget``: delete the address (and opt out)."""

    email: str | None
    opt_in: bool | None
    forget: bool


_DOOR_TYPES = (
    frozenset(AUTH_FRAME_FIELDS)
    | REVIEW_COMMAND_TYPES
    | TOURNAMENT_REQUEST_TYPES
    | ACCOUNT_COMMAND_TYPES
)
"""The types a door answers itself (the rest are hub commands, or unknown)."""


Incoming = Command | AuthFrame | AccountFrame | ReviewRequest | TournamentRequest
"""What one client frame is (:func:`read_frame`)."""


def _auth_frame(envelope: Envelope, names: tuple[str, ...]) -> AuthFrame:
    fields = FieldReader(envelope.kind, envelope.payload)
    values = [fields.string(name, MAX_FIELD, secret=name in SECRET_FIELDS) for name in names]
    fields.done()
    return _AUTH_TYPES[envelope.kind](envelope.ack, *values)


def _account_frame(envelope: Envelope) -> AccountFrame:
    fields = FieldReader(envelope.kind, envelope.payload)
    if envelope.kind == "my_games":
        fields.done()
        return MyGamesFrame(envelope.ack)
    email = fields.string("email", MAX_EMAIL, required=False)
    opt_in = fields.boolean("opt_in", required=False)
    forget = fields.boolean("forget", required=False)
    fields.done()
    if email is not None:
        problem = email_problem(email)
        if problem is not None:
            raise ProtocolError(f"mail_settings: field 'email' {problem}")
    if forget and (email is not None or opt_in):
        raise ProtocolError("mail_settings: 'forget' deletes the address: send it alone")
    return MailSettingsFrame(envelope.ack, email, opt_in, bool(forget))


def read_frame(obj: object) -> Incoming:
    """The one typed value of a decoded client frame (see the module docstring).

    >>> read_frame({"t": "move", "d": {"game": "g1", "ply": 3, "move": "c4c5+"}, "a": 9})
    MoveCommand(ack=9, game_id='g1', ply=3, move='c4c5+')
    >>> read_frame({"t": "resume", "d": {"token": "abc"}, "a": 1})
    ResumeFrame(ack=1, token='abc')
    >>> read_frame({"t": "export", "d": {"game": "g1", "format": "kif"}, "a": 2})
    ExportRequest(ack=2, game_id='g1', format='kif')

    :raises ProtocolError: a bad envelope, an unknown type, missing/extra/wrong-typed fields;
        its ``ack`` is the frame's ack id when that is valid.
    """
    try:
        envelope = parse_envelope(obj)
        kind = envelope.kind
        if kind in _DOOR_TYPES:  # one look-up on the path of every move
            names = AUTH_FRAME_FIELDS.get(kind)
            if names is not None:
                return _auth_frame(envelope, names)
            if kind in TOURNAMENT_REQUEST_TYPES:
                return tournament_request_of(envelope)
            if kind in ACCOUNT_COMMAND_TYPES:
                return _account_frame(envelope)
            return review_request(kind, envelope.payload, envelope.ack)
        return command_of(envelope)
    except ProtocolError as error:
        error.ack = ack_of(obj)
        raise

"""Transport-level client frames: authentication and logout.

These frames share the hub's envelope ``{"t": type, "d": payload, "a": ack_id}`` but are handled
by the transport, not the hub, because they establish *who* a connection is:

* ``{"t": "register", "d": {"name": ..., "password": ...}}``
* ``{"t": "login", "d": {"name": ..., "password": ...}}``
* ``{"t": "guest"}``
* ``{"t": "resume", "d": {"token": ...}}`` — a session token from an earlier ``welcome``
* ``{"t": "logout"}`` — end the session and close the connection

Every other type is a hub command (:func:`server.hub.commands.parse_command`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from server.hub.commands import ack_of
from server.hub.errors import ProtocolError
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


TRANSPORT_TYPES = frozenset({"register", "login", "guest", "resume", "logout"})
"""The frame types the transport handles itself."""


def _payload(kind: str, obj: Mapping[str, Any], fields: tuple[str, ...]) -> dict[str, str]:
    extra = sorted(set(obj) - {"t", "d", "a"})
    if extra:
        raise ProtocolError(f"unknown frame key(s) {', '.join(map(repr, extra))}")
    payload = obj.get("d") or {}
    if not isinstance(payload, Mapping):
        raise ProtocolError(f"{kind}: 'd' must be an object")
    unknown = sorted(set(payload) - set(fields))
    if unknown:
        raise ProtocolError(f"{kind}: unknown field(s) {', '.join(map(repr, unknown))}")
    values: dict[str, str] = {}
    for name in fields:
        value = payload.get(name)
        if value is None:
            raise ProtocolError(f"{kind}: missing field {name!r}")
        if not isinstance(value, str):
            raise ProtocolError(f"{kind}: field {name!r} must be a string")
        if not value or len(value) > MAX_FIELD:
            raise ProtocolError(f"{kind}: field {name!r} must have 1 to {MAX_FIELD} characters")
        values[name] = value
    return values


def parse_transport_frame(obj: Mapping[str, Any]) -> AuthFrame | None:
    """The transport frame in a decoded JSON object, or ``None`` for a hub command.

    >>> parse_transport_frame({"t": "resume", "d": {"token": "abc"}, "a": 1})
    ResumeFrame(ack=1, token='abc')
    >>> parse_transport_frame({"t": "seek"}) is None
    True

    :raises ProtocolError: a transport frame with missing, extra or wrong-typed fields.
    """
    kind = obj.get("t")
    if kind not in TRANSPORT_TYPES:
        return None
    ack = ack_of(obj)
    if kind == "register":
        values = _payload(kind, obj, ("name", "password"))
        return RegisterFrame(ack, values["name"], values["password"])
    if kind == "login":
        values = _payload(kind, obj, ("name", "password"))
        return LoginFrame(ack, values["name"], values["password"])
    if kind == "resume":
        return ResumeFrame(ack, _payload(kind, obj, ("token",))["token"])
    _payload(str(kind), obj, ())
    return GuestFrame(ack) if kind == "guest" else LogoutFrame(ack)

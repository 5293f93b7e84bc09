"""A websocket connection's authentication frames: logging in, and the account's sessions.

:func:`on_auth` handles the :class:`~server.hub.incoming.AuthFrame` that
:meth:`ClientConnection._dispatch <server.transport.server.ClientConnection._dispatch>` hands it
(``ping`` excepted: answered there): ``register``, ``login``, ``resume`` and ``guest`` log the
connection in (answered by ``welcome``, then the hub's ``hello``); ``logout``,
``logout_everywhere`` and ``change_password`` act on a logged-in connection's sessions
(:func:`on_account`). Refused logins count towards :data:`MAX_AUTH_FAILURES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from websockets.frames import CloseCode

from server.hub.errors import ErrorCode
from server.hub.incoming import (
    AuthFrame,
    ChangePasswordFrame,
    GuestFrame,
    LoginFrame,
    LogoutEverywhereFrame,
    LogoutFrame,
    RegisterFrame,
    ResumeFrame,
)
from server.hub.messages import Message, MessageKind
from server.hub.payloads import VariantName, WelcomePayload
from server.rules import VARIANT_NAMES, get_variant
from server.transport.accounts import AuthError

if TYPE_CHECKING:
    from server.transport.server import ClientConnection

__all__ = ["MAX_AUTH_FAILURES", "VARIANTS", "on_account", "on_auth"]

MAX_AUTH_FAILURES = 5
"""Failed logins per connection before it is closed (1008)."""

VARIANTS: list[VariantName] = [
    {"name": name, "title": get_variant(name).title, "family": get_variant(name).family}
    for name in VARIANT_NAMES
]
"""The variants this server plays, sent with ``welcome`` (for clients' seek forms)."""

_FAILURES = (ErrorCode.BAD_CREDENTIALS, ErrorCode.BAD_SESSION, ErrorCode.TOO_MANY_ATTEMPTS)
"""Refused logins that count towards :data:`MAX_AUTH_FAILURES`."""


async def on_account(conn: ClientConnection, frame: AuthFrame) -> None:
    """``logout``, ``logout_everywhere``, ``change_password``: a logged-in connection's
    sessions."""
    identity = conn.identity
    if identity is None:
        conn.error(ErrorCode.NOT_AUTHENTICATED, "You are not logged in.", frame.ack)
        return
    accounts = conn.server.accounts
    try:
        if isinstance(frame, ChangePasswordFrame):
            ended = await accounts.change_password(identity, frame.old, frame.new, conn.address)
            conn.send(Message(MessageKind.ACK, {"sessions_ended": ended}, a=frame.ack))
            return
        if isinstance(frame, LogoutEverywhereFrame):
            await accounts.logout_everywhere(identity)
        else:
            await accounts.logout(identity.token)
    except AuthError as exc:
        conn.error(exc.code, exc.message, frame.ack)
        return
    conn.send(Message(MessageKind.ACK, {"logged_out": True}, a=frame.ack))
    conn.close_soon(CloseCode.NORMAL_CLOSURE, "logged out")


async def on_auth(conn: ClientConnection, frame: AuthFrame) -> None:
    """Log ``conn`` in (``welcome``, then connected to the hub), or act on its sessions."""
    accounts = conn.server.accounts
    if isinstance(frame, (LogoutFrame, LogoutEverywhereFrame, ChangePasswordFrame)):
        await on_account(conn, frame)
        return
    if conn.identity is not None:
        conn.error(ErrorCode.ALREADY_AUTHENTICATED, ack=frame.ack)
        return
    try:
        if isinstance(frame, RegisterFrame):
            identity = await accounts.register(frame.name, frame.password, conn.address)
        elif isinstance(frame, LoginFrame):
            identity = await accounts.login(frame.name, frame.password, conn.address)
        elif isinstance(frame, ResumeFrame):
            identity = await accounts.resume(frame.token)
        else:
            assert isinstance(frame, GuestFrame)
            identity = accounts.guest()
    except AuthError as exc:
        conn.error(exc.code, exc.message, frame.ack)
        # Refused: no longer opening (else each connection sending a bad login, refused
        # at once once its address is backed off, would hold a slot for OPENING_HOLD_S).
        conn.server.opened(conn)
        if exc.code in _FAILURES:
            conn.auth_failures += 1
            if conn.auth_failures >= MAX_AUTH_FAILURES:
                conn.close_soon(CloseCode.POLICY_VIOLATION, "too many failed logins")
        return
    driver = conn.server.driver
    # Read before the welcome, so that the hub knows the connection once the client does.
    stored = await driver.stored_of(identity.info)
    if conn.closing or conn.identity is not None:
        return  # closed, or another login won while this one was hashing
    conn.identity = identity
    conn.stop_auth_timer()
    welcome: WelcomePayload = {
        "player": identity.info.view(),
        "token": identity.token,
        "variants": VARIANTS,
    }
    conn.send(Message(MessageKind.WELCOME, welcome, a=frame.ack))
    conn.conn_id = driver.new_conn_id()
    driver.connect(conn.conn_id, conn, identity.info, stored)
    conn.server.logged_in(conn)

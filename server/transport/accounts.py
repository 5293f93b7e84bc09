"""Who a connection is: registration, password login, session tokens and guests.

Passwords are hashed with argon2id (:class:`argon2.PasswordHasher`, cost from the settings).
Hashing and verifying take tens of milliseconds of CPU by design, so they run in worker threads
(``asyncio.to_thread``), at most ``hash_concurrency`` at once, and never on the event loop.

A successful login or registration creates a session: a random token (``secrets.token_urlsafe``)
stored by the store (only its hash) that a reconnecting client presents instead of the password.
Guests get a token too, kept in memory only (guests have no database row), so a guest can resume
after a dropped connection while the process lives.

The store is reached through the small :class:`AccountStore` port; the composition root adapts
the real store to it and translates its errors into :class:`NameTaken` / :class:`AccountsUnavailable`.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from server.hub.errors import ErrorCode
from server.hub.identity import COMPUTER, PlayerId, PlayerInfo, Rating, RatingKey

__all__ = [
    "AccountStore",
    "Accounts",
    "AccountsUnavailable",
    "AuthError",
    "Identity",
    "NameTaken",
    "guest_player_id",
    "registered_player_id",
    "store_player_id",
]

NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_-]{2,19}")
RESERVED_PREFIX = "guest"
MIN_PASSWORD = 8
MAX_PASSWORD = 128
GUEST_SESSION_TTL_S = 24 * 3600.0
MAX_GUEST_SESSIONS = 100_000


class NameTaken(Exception):
    """Raised by :meth:`AccountStore.create_player` when the name exists (in any letter case)."""


class AccountsUnavailable(Exception):
    """Raised by an :class:`AccountStore` method when the database cannot be reached."""


class StoredPlayer(Protocol):
    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def password_hash(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def bot(self) -> bool: ...


class StoredRating(Protocol):
    @property
    def variant(self) -> str: ...

    @property
    def speed(self) -> str: ...

    @property
    def rating(self) -> Rating: ...


class AccountStore(Protocol):
    """What accounts need from the database."""

    async def create_player(self, name: str, password_hash: str) -> StoredPlayer: ...

    async def player_by_name(self, name: str) -> StoredPlayer | None: ...

    async def create_session(self, player_id: int) -> str: ...

    async def session_player(self, token: str) -> StoredPlayer | None: ...

    async def resume_session(
        self, token: str
    ) -> tuple[StoredPlayer, Sequence[StoredRating]] | None:
        """The player a token logs in with all their ratings (one round trip on PostgreSQL:
        what a reconnect storm's logins need), or None."""
        ...

    async def delete_session(self, token: str) -> bool: ...

    async def player_ratings(self, player_id: int) -> Sequence[StoredRating]: ...


class AuthError(Exception):
    """A refused login, registration or resumption; ``code`` and ``message`` go to the client."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        text = code.text if message is None else message
        super().__init__(text)
        self.code = code
        self.message = text


@dataclass(frozen=True)
class Identity:
    """An authenticated connection's player, and the session token that proves it."""

    info: PlayerInfo
    token: str

    @property
    def guest(self) -> bool:
        return self.info.guest


def registered_player_id(store_id: int) -> PlayerId:
    """The hub's id of a registered player (``"u<store id>"``).

    >>> registered_player_id(42)
    'u42'
    """
    return f"u{store_id}"


def guest_player_id() -> PlayerId:
    """A fresh, unguessable hub id for a guest (``"g<16 hex>"``)."""
    return f"g{secrets.token_hex(8)}"


def store_player_id(player_id: PlayerId) -> int | None:
    """The store's id of a registered player's hub id; ``None`` for a guest.

    >>> store_player_id("u42"), store_player_id("g0123456789abcdef")
    (42, None)
    """
    if player_id.startswith("u") and player_id[1:].isascii() and player_id[1:].isdigit():
        return int(player_id[1:])
    return None


RESERVED_NAMES = frozenset({COMPUTER.name.lower()})
"""Names no account may take: the computer player's (server/hub/identity.py)."""


def check_name(name: str) -> None:
    """Refuse a name that cannot be registered.

    :raises AuthError: ``invalid_name``.
    """
    if not NAME_PATTERN.fullmatch(name):
        raise AuthError(
            ErrorCode.INVALID_NAME,
        )
    if name.lower().startswith(RESERVED_PREFIX):
        raise AuthError(
            ErrorCode.INVALID_NAME, "Names starting with 'guest' are reserved for guests."
        )
    if name.lower() in RESERVED_NAMES:
        raise AuthError(ErrorCode.INVALID_NAME, f"The name {name!r} is reserved.")


def check_password(password: str) -> None:
    """:raises AuthError: ``invalid_password`` unless 8 to 128 characters."""
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AuthError(
            ErrorCode.INVALID_PASSWORD,
            f"A password has {MIN_PASSWORD} to {MAX_PASSWORD} characters.",
        )


class Accounts:
    """Registration, login, session resumption and guests (see the module docstring)."""

    def __init__(
        self,
        store: AccountStore,
        hasher: PasswordHasher,
        *,
        hash_concurrency: int = 2,
        guest_ttl_s: float = GUEST_SESSION_TTL_S,
        max_guests: int = MAX_GUEST_SESSIONS,
    ) -> None:
        self._store = store
        self._hasher = hasher
        self._hashing = asyncio.Semaphore(max(1, hash_concurrency))
        self._dummy_hash: str | None = None
        self._guests: OrderedDict[str, tuple[PlayerInfo, float]] = OrderedDict()
        self._guest_ttl_s = guest_ttl_s
        self._max_guests = max_guests

    # --- registered players ------------------------------------------------------------------

    async def register(self, name: str, password: str) -> Identity:
        """Create a player and log them in.

        :raises AuthError: ``invalid_name``, ``invalid_password``, ``name_taken``,
            ``unavailable``.
        """
        check_name(name)
        check_password(password)
        password_hash = await self._hash(password)
        try:
            player = await self._store.create_player(name, password_hash)
        except NameTaken:
            raise AuthError(ErrorCode.NAME_TAKEN, f"The name {name!r} is taken.") from None
        except AccountsUnavailable:
            raise _unavailable() from None
        return await self._session_for(player)

    async def login(self, name: str, password: str) -> Identity:
        """Check a name and password; on success start a session.

        Unknown names and wrong passwords get the same answer and take the same time (the
        password is checked against a dummy hash), so names cannot be probed.

        :raises AuthError: ``bad_credentials``, ``unavailable``.
        """
        try:
            player = await self._store.player_by_name(name) if len(name) <= 64 else None
        except AccountsUnavailable:
            raise _unavailable() from None
        stored_hash = player.password_hash if player is not None else await self._dummy()
        if not await self._verify(stored_hash, password) or player is None:
            raise AuthError(ErrorCode.BAD_CREDENTIALS)
        return await self._session_for(player)

    async def resume(self, token: str) -> Identity:
        """The identity a session token stands for (registered player or guest).

        :raises AuthError: ``bad_session`` (unknown or expired token), ``unavailable``.
        """
        guest = self._guest(token)
        if guest is not None:
            return Identity(guest, token)
        try:
            found = await self._store.resume_session(token) if len(token) <= 256 else None
        except AccountsUnavailable:
            raise _unavailable() from None
        if found is None:
            raise AuthError(ErrorCode.BAD_SESSION)
        player, ratings = found
        return Identity(_player_info(player, ratings), token)

    async def logout(self, token: str) -> None:
        """End a session (a guest's token is forgotten)."""
        if self._guests.pop(token, None) is not None:
            return
        try:
            await self._store.delete_session(token)
        except AccountsUnavailable:
            raise _unavailable() from None

    async def player_info(self, player: StoredPlayer) -> PlayerInfo:
        """The hub's view of a registered player (with the ratings), without a session: for
        a door that authenticates each request by a token of its own (the HTTP API).

        :raises AuthError: ``unavailable``.
        """
        try:
            ratings = await self._store.player_ratings(player.id)
        except AccountsUnavailable:
            raise _unavailable() from None
        return _player_info(player, ratings)

    async def _session_for(self, player: StoredPlayer) -> Identity:
        try:
            ratings = await self._store.player_ratings(player.id)
            token = await self._store.create_session(player.id)
        except AccountsUnavailable:
            raise _unavailable() from None
        return Identity(_player_info(player, ratings), token)

    # --- guests -----------------------------------------------------------------------------

    def guest(self) -> Identity:
        """A new guest with a random name (``Guest-xxxxxx``) and an in-memory session."""
        player_id = guest_player_id()
        info = PlayerInfo(player_id, f"Guest-{player_id[1:7]}", True)
        token = secrets.token_urlsafe(32)
        self._guests[token] = (info, time.monotonic())
        while len(self._guests) > self._max_guests:
            self._guests.popitem(last=False)
        return Identity(info, token)

    def _guest(self, token: str) -> PlayerInfo | None:
        entry = self._guests.get(token)
        if entry is None:
            return None
        info, last_used = entry
        now = time.monotonic()
        if now - last_used > self._guest_ttl_s:
            del self._guests[token]
            return None
        self._guests[token] = (info, now)
        self._guests.move_to_end(token)
        return info

    # --- hashing ----------------------------------------------------------------------------

    async def _hash(self, password: str) -> str:
        async with self._hashing:
            return await asyncio.to_thread(self._hasher.hash, password)

    async def _verify(self, stored_hash: str, password: str) -> bool:
        def verify() -> bool:
            try:
                return self._hasher.verify(stored_hash, password)
            except (VerificationError, InvalidHashError):
                return False

        async with self._hashing:
            return await asyncio.to_thread(verify)

    async def _dummy(self) -> str:
        if self._dummy_hash is None:
            self._dummy_hash = await self._hash(secrets.token_hex(16))
        return self._dummy_hash


def _player_info(player: StoredPlayer, ratings: Sequence[StoredRating]) -> PlayerInfo:
    pools: dict[RatingKey, Rating] = {(r.variant, r.speed): r.rating for r in ratings}
    return PlayerInfo(registered_player_id(player.id), player.name, False, pools, bot=player.bot)


def _unavailable() -> AuthError:
    return AuthError(
        ErrorCode.UNAVAILABLE, "The player database is unavailable; please try again soon."
    )

"""Who a connection is: registration, password login, session tokens and guests.

Passwords are hashed with argon2id (:class:`argon2.PasswordHasher`, cost from the settings).
Hashing and verifying take tens of milliseconds of CPU by design, so they run in worker threads
(``asyncio.to_thread``), at most ``hash_concurrency`` at once (a :class:`HashPool`, the
trusted attempts first), and never on the event loop.
Every password check first asks the :class:`~server.transport.login_guard.LoginGuard`
(back-off per account and per address, one hash per address at once): a throttled attempt is
refused before any hashing. A failed login is logged (name and address, never the password).

A successful login or registration creates a session: a random token (``secrets.token_urlsafe``)
stored by the store (only its hash) that a reconnecting client presents instead of the password.
A session unused for ``session_max_idle`` has ended. :meth:`Accounts.logout_everywhere` and
:meth:`Accounts.change_password` end a player's sessions (the second all but the one in use)
and tell the doors (:attr:`Accounts.on_revoked`), which close the player's other connections.
Guests get a token too, kept in memory only (guests have no database row), so a guest can resume
after a dropped connection while the process lives.

The store is reached through the small :class:`AccountStore` port; the composition root adapts
the real store to it and translates its errors into :class:`NameTaken` / :class:`AccountsUnavailable`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from server.hub.errors import ErrorCode
from server.hub.identity import COMPUTER, PlayerId, PlayerInfo, Rating, RatingKey
from server.transport.login_guard import HashPool, LoginGuard, Throttled

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

logger = logging.getLogger(__name__)

NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_-]{2,19}")
RESERVED_PREFIX = "guest"
MIN_PASSWORD = 8
MAX_PASSWORD = 128
GUEST_SESSION_TTL_S = 24 * 3600.0
MAX_GUEST_SESSIONS = 100_000
GUEST_NAME_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
GUEST_NAME_LENGTH = 10
"""Random characters of a guest's name (36**10: 51 bits; FICS's 17-character handle column
holds ``Guest-`` and them): two of 100,000 guests draw one name with a chance of about 1 in
700,000, and this process also draws again a name one of its guests has."""
SESSION_MAX_IDLE = timedelta(days=30)


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

    async def session_player(
        self, token: str, *, max_idle: timedelta | None = None
    ) -> StoredPlayer | None:
        """The player of a session used within ``max_idle`` (an older one is deleted)."""
        ...

    async def resume_session(
        self, token: str, *, max_idle: timedelta | None = None
    ) -> tuple[StoredPlayer, Sequence[StoredRating]] | None:
        """The player a token logs in with all their ratings (one round trip on PostgreSQL:
        what a reconnect storm's logins need), or None (also for a session older than
        ``max_idle``)."""
        ...

    async def delete_session(self, token: str) -> bool: ...

    async def delete_player_sessions(self, player_id: int) -> int: ...

    async def set_password(self, player_id: int, password_hash: str, keep_session: str) -> int:
        """Store a new password hash and end every session of the player but ``keep_session``;
        return how many ended."""
        ...

    async def player_ratings(self, player_id: int) -> Sequence[StoredRating]: ...


class AuthError(Exception):
    """A refused login, registration or resumption; ``code`` and ``message`` go to the client."""

    def __init__(
        self, code: ErrorCode, message: str | None = None, retry_after_s: int | None = None
    ) -> None:
        text = code.text if message is None else message
        super().__init__(text)
        self.code = code
        self.message = text
        self.retry_after_s = retry_after_s
        """For ``too_many_attempts``: the seconds to wait (HTTP's ``Retry-After``)."""


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


def guest_name() -> str:
    """A random guest name: ``Guest-`` and :data:`GUEST_NAME_LENGTH` letters and digits."""
    return "Guest-" + "".join(secrets.choice(GUEST_NAME_ALPHABET) for _ in range(GUEST_NAME_LENGTH))


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
        guard: LoginGuard | None = None,
        session_max_idle: timedelta = SESSION_MAX_IDLE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._hasher = hasher
        self._hashing = HashPool(hash_concurrency)
        self._dummy_hash: str | None = None
        self._guests: OrderedDict[str, tuple[PlayerInfo, float]] = OrderedDict()
        self._guest_names: dict[str, str] = {}
        """Lower-case name -> token of the guests in :attr:`_guests` (no two share a name)."""
        self._guest_ttl_s = guest_ttl_s
        self._max_guests = max_guests
        self.guard = guard or LoginGuard()
        self._max_idle = session_max_idle
        self.clock = clock
        """Seconds of a monotonic clock, for the login throttle (tests move it)."""
        self.on_revoked: list[Callable[[PlayerId, str | None], None]] = []
        """Told ``(player id, the session kept or None)`` when a player's sessions were ended
        (log out everywhere, a new password): each door closes that player's connections
        that are not on the kept session."""

    # --- registered players ------------------------------------------------------------------

    async def register(self, name: str, password: str, address: str = "") -> Identity:
        """Create a player and log them in (``address``: the client's, for the limit on
        registrations per address).

        :raises AuthError: ``invalid_name``, ``invalid_password``, ``too_many_attempts``,
            ``name_taken``, ``unavailable``.
        """
        check_name(name)
        check_password(password)
        try:
            self.guard.check_registration(address, self.clock())
        except Throttled as throttled:
            raise _throttled(throttled) from None
        async with self.guard.one_at_a_time(address):
            password_hash = await self._hash(password)
        try:
            player = await self._store.create_player(name, password_hash)
        except NameTaken:
            raise AuthError(ErrorCode.NAME_TAKEN, f"The name {name!r} is taken.") from None
        except AccountsUnavailable:
            raise _unavailable() from None
        self.guard.succeeded(name, address)  # the address is the owner's
        return await self._session_for(player)

    async def login(self, name: str, password: str, address: str = "") -> Identity:
        """Check a name and password (:meth:`authenticate`); on success start a session.

        :raises AuthError: ``too_many_attempts``, ``bad_credentials``, ``unavailable``.
        """
        return await self._session_for(await self.authenticate(name, password, address))

    async def authenticate(self, name: str, password: str, address: str = "") -> StoredPlayer:
        """The account a name and password open, from the client at ``address``.

        Throttled attempts are refused before anything else (see
        :mod:`server.transport.login_guard`). Unknown names and wrong passwords get the same
        answer and take the same time (the password is checked against a dummy hash), so
        names cannot be probed. A failure is logged with the name and the address.

        :raises AuthError: ``too_many_attempts``, ``bad_credentials``, ``unavailable``.
        """
        guard = self.guard
        try:
            guard.check_login(name, address, self.clock())
            async with guard.one_at_a_time(address):
                # Again: the attempts before this one (from this address) may have failed.
                guard.check_login(name, address, self.clock())
                player = await self._check(name, password, guard.trusted(name, address))
        except Throttled as throttled:
            raise _throttled(throttled) from None
        if player is None:
            guard.failed(name, address, self.clock())
            logger.warning("failed login as %r from %s", name[:64], address or "?")
            raise AuthError(ErrorCode.BAD_CREDENTIALS)
        guard.succeeded(name, address)
        return player

    async def _check(self, name: str, password: str, trusted: bool) -> StoredPlayer | None:
        """The player if the password is theirs, else None (after the same hashing work);
        ``trusted``: first in line for the hashing pool."""
        try:
            player = await self._store.player_by_name(name) if len(name) <= 64 else None
        except AccountsUnavailable:
            raise _unavailable() from None
        stored_hash = player.password_hash if player is not None else await self._dummy()
        if not await self._verify(stored_hash, password, trusted) or player is None:
            return None
        return player

    async def change_password(
        self, identity: Identity, old: str, new: str, address: str = ""
    ) -> int:
        """Give a logged-in player a new password (checked as a login with the old one, so
        throttled the same way) and end their other sessions; return how many ended.

        :raises AuthError: ``bad_session`` (a guest), ``invalid_password``,
            ``too_many_attempts``, ``bad_credentials``, ``unavailable``.
        """
        store_id = store_player_id(identity.info.id)
        if store_id is None:
            raise AuthError(ErrorCode.BAD_SESSION, "Guests have no password.")
        check_password(new)
        player = await self.authenticate(identity.info.name, old, address)
        async with self.guard.one_at_a_time(address):
            new_hash = await self._hash(new)
        try:
            ended = await self._store.set_password(player.id, new_hash, identity.token)
        except AccountsUnavailable:
            raise _unavailable() from None
        logger.info("password of %s changed from %s", identity.info.name, address or "?")
        self._revoked(identity.info.id, identity.token)
        return ended

    async def logout_everywhere(self, identity: Identity) -> int:
        """End every session of the player (a guest: its one); return how many ended. API
        tokens are not touched (the token page lists and revokes them)."""
        store_id = store_player_id(identity.info.id)
        if store_id is None:
            await self.logout(identity.token)
            ended = 1
        else:
            try:
                ended = await self._store.delete_player_sessions(store_id)
            except AccountsUnavailable:
                raise _unavailable() from None
        self._revoked(identity.info.id, None)
        return ended

    def _revoked(self, player_id: PlayerId, kept: str | None) -> None:
        for listener in self.on_revoked:
            listener(player_id, kept)

    async def resume(self, token: str) -> Identity:
        """The identity a session token stands for (registered player or guest).

        :raises AuthError: ``bad_session`` (unknown or expired token), ``unavailable``.
        """
        guest = self._guest(token)
        if guest is not None:
            return Identity(guest, token)
        try:
            found = (
                await self._store.resume_session(token, max_idle=self._max_idle)
                if len(token) <= 256
                else None
            )
        except AccountsUnavailable:
            raise _unavailable() from None
        if found is None:
            raise AuthError(ErrorCode.BAD_SESSION)
        player, ratings = found
        return Identity(_player_info(player, ratings), token)

    async def session_account(self, token: str) -> StoredPlayer | None:
        """The registered account of a live session token, or None (for a door that reads a
        session token on each request: the HTTP API).

        :raises AccountsUnavailable: the database cannot be reached.
        """
        if len(token) > 256:
            return None
        return await self._store.session_player(token, max_idle=self._max_idle)

    async def logout(self, token: str) -> None:
        """End a session (a guest's token is forgotten)."""
        entry = self._guests.pop(token, None)
        if entry is not None:
            self._guest_names.pop(entry[0].name.lower(), None)
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
        """A new guest with a random name (:func:`guest_name`, none of this process's
        guests' names) and an in-memory session."""
        name = guest_name()
        while name.lower() in self._guest_names:
            name = guest_name()
        player_id = guest_player_id()
        info = PlayerInfo(player_id, name, True)
        token = secrets.token_urlsafe(32)
        self._guests[token] = (info, time.monotonic())
        self._guest_names[name.lower()] = token
        while len(self._guests) > self._max_guests:
            _, (old, _) = self._guests.popitem(last=False)
            self._guest_names.pop(old.name.lower(), None)
        return Identity(info, token)

    def _guest(self, token: str) -> PlayerInfo | None:
        entry = self._guests.get(token)
        if entry is None:
            return None
        info, last_used = entry
        now = time.monotonic()
        if now - last_used > self._guest_ttl_s:
            del self._guests[token]
            self._guest_names.pop(info.name.lower(), None)
            return None
        self._guests[token] = (info, now)
        self._guests.move_to_end(token)
        return info

    # --- hashing ----------------------------------------------------------------------------

    async def _hash(self, password: str) -> str:
        async with self._hashing.slot(trusted=False):
            return await asyncio.to_thread(self._hasher.hash, password)

    async def _verify(self, stored_hash: str, password: str, trusted: bool) -> bool:
        def verify() -> bool:
            try:
                return self._hasher.verify(stored_hash, password)
            except (VerificationError, InvalidHashError):
                return False

        async with self._hashing.slot(trusted):
            return await asyncio.to_thread(verify)

    async def _dummy(self) -> str:
        if self._dummy_hash is None:
            self._dummy_hash = await self._hash(secrets.token_hex(16))
        return self._dummy_hash


def _player_info(player: StoredPlayer, ratings: Sequence[StoredRating]) -> PlayerInfo:
    pools: dict[RatingKey, Rating] = {(r.variant, r.speed): r.rating for r in ratings}
    return PlayerInfo(registered_player_id(player.id), player.name, False, pools, bot=player.bot)


def _throttled(throttled: Throttled) -> AuthError:
    return AuthError(ErrorCode.TOO_MANY_ATTEMPTS, str(throttled), throttled.retry_after_s)


def _unavailable() -> AuthError:
    return AuthError(
        ErrorCode.UNAVAILABLE, "The player database is unavailable; please try again soon."
    )

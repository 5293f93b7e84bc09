"""The ICS listener: plain TCP, one line per command, FICS text back.

Each connection is a :class:`IcsConnection`: it reads lines (:class:`TelnetLines`: CR LF, CR NUL
or LF ends a line, telnet negotiation bytes and NULs are dropped, lines longer than
:data:`MAX_LINE` characters are refused), passes each through the same token
bucket as a websocket frame, logs the player in the FICS way (``login:`` then ``password:``, or
``guest`` and return), and then hands lines to its :class:`IcsSession`. To the
:class:`~server.transport.driver.HubDriver` it is a peer like a websocket: the hub's messages
arrive as JSON frames in :meth:`IcsConnection.put` and are rendered as text by the session.

Output of one loop turn is written at once, followed by the ``fics% `` prompt; text that is not
an answer to a line just typed starts on a new line.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from server.config import Settings
from server.hub.commands import Command
from server.hub.effects import ConnId
from server.hub.errors import ErrorCode
from server.hub.fields import valid_text
from server.hub.identity import PlayerInfo
from server.hub.review_payloads import MyGameView
from server.hub.user_text import forbidden_character, neutralised
from server.transport.accounts import Accounts, AuthError, Identity, store_player_id
from server.transport.addresses import (
    ProxyHeaderError,
    TrustedProxies,
    client_address,
    read_proxy_header,
    remember_forwarded,
)
from server.transport.admission import Admission, Admit, Door
from server.transport.codec import DecodeError, decode
from server.transport.driver import HubDriver
from server.transport.ics.games import GameNumbers
from server.transport.ics.review import ReviewStore
from server.transport.ics.session import IcsSession, ListedPlayer
from server.transport.ics.telnet import TelnetLines
from server.transport.notify import Notices, my_game_entries
from server.transport.ratelimit import TokenBucket, Verdict
from server.transport.review_reads import ReviewReads, account_key, address_key
from server.transport.tournament_service import TournamentService
from server.transport.ws_auth import MAX_AUTH_FAILURES

__all__ = ["IcsConnection", "IcsServer"]

logger = logging.getLogger(__name__)

PROMPT = "fics% "
MAX_LINE = 1024
"""Longest accepted input line (characters); longer ones are refused and ignored."""
WRITE_LIMIT = 1024 * 1024
"""A client that lets this much output pile up unread is dropped (a slow consumer)."""
READ_CHUNK = 4096

BANNER = [
    "",
    "Welcome to the variant hub's ICS port: Mini-Shogi, Sho Shogi, Wild Castle (wild/1),",
    "Spartan Chess and Dai Shogi, with the players of the web client.",
    "",
    'Log in with your name and password, or as "guest". New accounts are made on the web.',
    "",
]


class IcsConnection:
    """One TCP client (see the module docstring)."""

    def __init__(
        self, server: IcsServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self._server = server
        self._reader = reader
        self._writer = writer
        self.address = client_address(writer.transport)
        """The client address this connection comes from (a trusted balancer's PROXY header
        honoured; the one place this door reads it)."""
        self._loop = asyncio.get_running_loop()
        limits = server.settings
        self._bucket = TokenBucket(
            limits.rate_limit_per_s, limits.rate_limit_burst, self._loop.time()
        )
        self.identity: Identity | None = None
        self.conn_id: ConnId | None = None
        self.session: IcsSession | None = None
        self._lines: list[str] = []
        self._answering = False
        self._flush_scheduled = False
        self._closing = False
        self._failures = 0

    # --- Peer / FrameSink ---------------------------------------------------------------------

    @property
    def outbox(self) -> IcsConnection:
        return self

    def put(self, frame: bytes) -> None:
        """A hub message for this connection (JSON, as a websocket would get it)."""
        if self._closing or self.session is None:
            return
        try:
            message = decode(frame)
        except DecodeError:  # pragma: no cover - the hub only emits JSON
            return
        try:
            self.session.on_message(message)
        except Exception:  # pragma: no cover - a bug: keep the connection, log it
            logger.exception("ICS rendering failed for %s", message.get("t"))

    def close(self) -> None:
        """The driver forgot this connection (FrameSink): nothing more is sent."""
        self._closing = True

    def close_soon(self, code: int, reason: str) -> None:
        """Say why, then close (the hub has already forgotten the connection)."""
        if not self._closing:
            self._flush()
            self._send_raw(f"\r\nDisconnected: {reason}.\r\n")
            self._closing = True
        self._writer.close()

    # --- output -------------------------------------------------------------------------------

    def write(self, lines: list[str]) -> None:
        """Queue ``lines`` (each without its line end) for the end of this turn. Each is made
        one line of visible text (:func:`neutralised`): user text in it — a chat line, a name,
        a stored game's record written before the edge refused control characters — can
        neither end the line to start one of its own nor send a terminal escape."""
        if self._closing or not lines:
            return
        self._lines.extend(map(neutralised, lines))
        self._schedule()

    def _schedule(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._writer.is_closing():
            return
        lines, self._lines = self._lines, []
        answering, self._answering = self._answering, False
        if not lines and not answering:
            return
        text = "" if answering else "\r\n"
        if lines:
            text += "\r\n".join(lines) + "\r\n"
        if self.session is not None and not self._closing:
            text += PROMPT
        self._send_raw(text)

    def _send_raw(self, text: str) -> None:
        transport = self._writer.transport
        if transport.is_closing():
            return
        transport.write(text.encode("utf-8", "replace"))
        if transport.get_write_buffer_size() > WRITE_LIMIT and not self._closing:
            logger.info("dropping ICS connection %s: output not read", self.conn_id)
            if self.conn_id is not None:
                self._loop.call_soon(self._server.driver.drop, self.conn_id)
            self._closing = True
            transport.abort()

    # --- input --------------------------------------------------------------------------------

    async def _read_lines(self) -> Any:
        lines = TelnetLines(MAX_LINE)
        while True:
            chunk = await self._reader.read(READ_CHUNK)
            if not chunk:
                return
            for line in lines.feed(chunk):
                yield line  # None: too long, refused

    async def run(self) -> None:
        auth_timer = self._loop.call_later(
            self._server.settings.login_timeout_s, self._auth_timeout
        )
        self._send_raw("\r\n".join(BANNER) + "\r\nlogin: ")
        state = "login"
        name = ""
        try:
            async for line in self._read_lines():
                if self._closing:
                    break
                verdict = self._bucket.take(self._loop.time())
                if verdict is Verdict.CLOSE:
                    self.close_soon(1008, "too many commands (flooding)")
                    break
                if verdict is Verdict.REJECT:
                    self._answering = True
                    self.write(
                        [
                            f"Too many commands: at most {self._server.settings.rate_limit_per_s:g}"
                            " per second; this one was ignored."
                        ]
                    )
                    continue
                if line is None or not valid_text(line) or forbidden_character(line) >= 0:
                    self._answering = self.session is not None
                    self.write([_refusal(line)])
                    if self.session is None:
                        self._send_raw("login: " if state == "login" else "")
                    continue
                if self.session is not None:
                    await self.session.on_line(line)
                    if self.session.quit:
                        self._closing = True
                        self._answering = True
                        self._flush()
                        self._writer.close()
                        break
                    # What the line wrote (and the hub answered meanwhile) ends with a prompt.
                    self._answering = True
                    self._schedule()
                    continue
                state, name = await self._login_step(state, name, line.strip())
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            auth_timer.cancel()
            self._closing = True
            self._server.forget(self)
            if self.conn_id is not None:
                self._server.driver.disconnect(self.conn_id)
            self._writer.close()
            # The session holds this connection's bound methods (a reference cycle): let go of
            # it, so that the closed connection is freed by reference counting.
            self.session = None

    def _auth_timeout(self) -> None:
        if self.identity is None:
            self._send_raw("\r\n**** LOGIN TIMEOUT ****\r\n")
            self._closing = True
            self._writer.close()

    async def _login_step(self, state: str, name: str, text: str) -> tuple[str, str]:
        accounts = self._server.accounts
        if state == "login":
            word = text.split()[0] if text else ""
            if not word:
                self._send_raw("login: ")
                return "login", ""
            if word.lower() == "guest":
                self.identity = accounts.guest()
                guest = self.identity.info.name
                self._send_raw(
                    f'\r\nLogging you in as "{guest}"; you may use this name to play unrated '
                    f'games.\r\n\r\nPress return to enter the server as "{guest}":\r\n'
                )
                return "guest", guest
            self._send_raw(
                f'\r\nIf "{word}" is your registered name, type the password.\r\n'
                "If not, just hit return to try another name.\r\n\r\npassword: "
            )
            return "password", word
        if state == "password":
            if not text:
                self._send_raw("\r\nlogin: ")
                return "login", ""
            try:
                identity = await accounts.login(name, text, self.address)
            except AuthError as error:
                self._failures += 1
                message = (
                    "Invalid password!"
                    if error.code == ErrorCode.BAD_CREDENTIALS
                    else error.message
                )
                self._send_raw(f"\r\n**** {message} ****\r\n\r\n")
                if self._failures >= MAX_AUTH_FAILURES:
                    self.close_soon(1008, "too many failed logins")
                    return "closed", ""
                self._send_raw("login: ")
                return "login", ""
            self.identity = identity
        assert self.identity is not None
        # Read before the session starts, so that the hub knows the connection by then.
        self._enter(await self._server.driver.stored_of(self.identity.info))
        return "ready", self.identity.info.name

    def _enter(self, stored: Sequence[str] | None) -> None:
        assert self.identity is not None
        info = self.identity.info
        driver = self._server.driver
        self.conn_id = driver.new_conn_id()
        self.session = IcsSession(info.view(), self._send_command, self.write, self._server)
        self.session.change_password = self._change_password
        self._server.remember(self)
        suffix = "(U)" if info.guest else ""
        self._send_raw(f"\r\n**** Starting FICS session as {info.name}{suffix} ****\r\n\r\n")
        self._answering = True
        self.write([])
        driver.connect(self.conn_id, self, info, stored)
        self.session.start()
        self._schedule()

    async def _change_password(self, old: str, new: str) -> list[str]:
        """FICS's ``password old new`` (checked and throttled as a login)."""
        assert self.identity is not None
        try:
            ended = await self._server.accounts.change_password(
                self.identity, old, new, self.address
            )
        except AuthError as error:
            if error.code == ErrorCode.BAD_CREDENTIALS:
                return ["Incorrect password; password not changed!"]
            return [f"Password not changed: {error.message}"]
        return [f"Password changed. Your other sessions ({ended}) have ended."]

    def _send_command(self, command: Command) -> None:
        # Not once closed: a session's delayed command (a re-join) may come after the end.
        if self.conn_id is not None and not self._closing:
            self._server.driver.handle(self.conn_id, command)


class IcsServer:
    """The ICS listener of one hub process (``ics_port``)."""

    def __init__(
        self,
        settings: Settings,
        driver: HubDriver,
        accounts: Accounts,
        store: ReviewStore | None = None,
        *,
        port: int | None = None,
        admission: Admission | None = None,
        reads: ReviewReads | None = None,
        tournaments: TournamentService | None = None,
        notices: Notices | None = None,
    ) -> None:
        """``port`` overrides ``settings.ics_port`` (0: any free port); ``admission``: the
        process's count of connections (by default one of this listener's own, with the cap of
        the settings); ``reads`` is the process's stored-game reads' gate and limits
        (:mod:`server.transport.review_reads`)."""
        self.settings = settings
        self.admission = admission or Admission(settings.max_connections)
        self._trusted = TrustedProxies(settings.trusted_proxies)
        self.refused = 0
        """Connections refused so far (over a limit, or a bad PROXY header)."""
        self.reads = reads
        self.tournaments = tournaments
        """The tournament director (the ``tourneys``/``tjoin``… commands), or None."""
        self._port = settings.ics_port if port is None else port
        self.driver = driver
        self.accounts = accounts
        self._store = store
        self.notices = notices
        """The "your turn" list's reader (``mygames`` lists the games not loaded from it)."""
        self.numbers = GameNumbers()
        self._server: asyncio.Server | None = None
        self._connections: set[IcsConnection] = set()
        self._by_name: dict[str, set[IcsConnection]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        accounts.on_revoked.append(self._revoked)

    def _revoked(self, player_id: str, kept: str | None) -> None:
        """The player's sessions but ``kept`` ended (log out everywhere, a new password):
        their ICS connections on another session are closed."""
        for connection in list(self._connections):
            identity = connection.identity
            if identity is not None and identity.info.id == player_id and identity.token != kept:
                connection.close_soon(1000, "your session ended (logged out elsewhere)")

    @property
    def store(self) -> ReviewStore | None:
        return self._store

    def requester(self, name: str) -> str:
        """Whose stored-game reads ``name``'s are: a registered player's account, a guest's
        address (:mod:`server.transport.review_reads`)."""
        for connection in self._by_name.get(name.lower(), ()):
            identity = connection.identity
            if identity is not None and identity.guest:
                return address_key(connection.address)
        return account_key(name)

    async def start(self) -> None:
        """Listen on ``settings.host`` and the ICS port."""
        self._server = await asyncio.start_server(self._handle, self.settings.host, self._port)

    @property
    def port(self) -> int:
        assert self._server is not None, "the ICS server is not started"
        return int(self._server.sockets[0].getsockname()[1])

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if not await self._admit(reader, writer):
            self.refused += 1
            writer.close()
            return
        connection = IcsConnection(self, reader, writer)
        self._connections.add(connection)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await connection.run()
        finally:
            self.admission.release(sock)
            self._connections.discard(connection)
            if task is not None:
                self._tasks.discard(task)

    async def _admit(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read a trusted balancer's PROXY header, then count the connection for its client
        address (:mod:`server.transport.admission`); False (said to the client) if refused."""
        sock = writer.get_extra_info("socket")
        address = client_address(writer.transport)
        if self._trusted.trusts(address):
            try:
                header = await asyncio.wait_for(
                    read_proxy_header(reader), self.settings.header_timeout_s
                )
            except (ProxyHeaderError, asyncio.IncompleteReadError, OSError, TimeoutError):
                logger.info("ICS connection from balancer %s without a PROXY header", address)
                return False
            if header.address is not None:
                remember_forwarded(sock, header.address)
                address = header.address
        limit = self.settings.ics_max_connections_per_address
        verdict = self.admission.admit(sock, Door.ICS, address, limit)
        if verdict is Admit.ADMIT:
            return True
        if verdict is Admit.PER_ADDRESS:
            why = f"too many connections from your address (at most {limit})"
        else:
            why = "the server is full"
            self.admission.release(sock)  # counted within the reserve: not served here
        writer.write(f"\r\n**** Sorry, {why}; try again later. ****\r\n".encode())
        return False

    # --- IcsHost ------------------------------------------------------------------------------

    def remember(self, connection: IcsConnection) -> None:
        """Index the connection by its player's name, for ``tell``. A name is one player's:
        if another player holds it already (two guests drew one name, which
        :class:`~server.transport.accounts.Accounts` makes next to impossible), the first
        keeps it, and a tell never reaches two players."""
        assert connection.identity is not None
        info = connection.identity.info
        group = self._by_name.setdefault(info.name.lower(), set())
        if any(other.identity is not None and other.identity.info.id != info.id for other in group):
            return
        group.add(connection)

    def forget(self, connection: IcsConnection) -> None:
        if connection.identity is None:
            return
        key = connection.identity.info.name.lower()
        group = self._by_name.get(key)
        if group is not None:
            group.discard(connection)
            if not group:
                del self._by_name[key]

    def online(self) -> list[ListedPlayer]:
        hub = self.driver.hub
        return [
            ListedPlayer(
                info.name,
                info.guest,
                hub.active_game(info.id) is not None,
                computer=info.computer,
                bot=info.bot,
            )
            for info in hub.online_players()
        ]

    def tell(self, sender: str, name: str, text: str) -> bool:
        targets = self._by_name.get(name.lower())
        if not targets:
            return False
        for connection in targets:
            if connection.session is not None:
                connection.session.tell_from(sender, text)
        return True

    def hub_player(self, player_id: str) -> PlayerInfo | None:
        online = self.driver.hub.state.players.get(player_id)
        return None if online is None else online.info

    def later(self, delay_s: float, call: Callable[[], None]) -> None:
        asyncio.get_running_loop().call_later(delay_s, call)

    async def my_games(self, player_id: str) -> list[MyGameView] | None:
        store_id = store_player_id(player_id)
        if self.notices is None or store_id is None:
            return None
        try:
            return my_game_entries(await self.notices.port.running_games(store_id))["games"]
        except Exception as error:
            logger.warning("ICS mygames: the store did not answer: %r", error)
            return None

    async def close(self) -> None:
        """Stop listening and close every connection."""
        if self._server is None:
            return
        self._server.close()
        for connection in list(self._connections):
            connection.close_soon(1001, "the server is shutting down")
        await self._server.wait_closed()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=2.0)
        self._server = None


def _refusal(line: str | None) -> str:
    """Why a typed line is refused before it reaches a session (``None``: it was too long).

    Lines are decoded with replacement characters, so no lone surrogate gets this far; a NUL
    byte does, and the store could not keep it (the same check as the JSON transport's). Nor
    does any line holding a control character (ESC, TAB, DEL …) or a bidirectional override
    get further: what a user types may reach other people's screens (a tell, a kibitz), and
    the one rule of user text (:mod:`server.hub.user_text`) is applied to the whole line here,
    at the edge.
    """
    if line is None:
        return f"Line too long (more than {MAX_LINE} characters); ignored."
    if "\x00" in line:
        return "Your line holds a NUL character, which this server does not accept; ignored."
    bad = ord(line[forbidden_character(line)])
    return (
        f"Your line holds a control character (U+{bad:04X}), which this server does not "
        "accept; ignored."
    )

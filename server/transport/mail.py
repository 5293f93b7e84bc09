"""E-mail notifications over SMTP (``aiosmtplib``), sent by one background task.

:meth:`Mailer.submit` only queues a :class:`MailJob` (a bounded queue; never waits), so a move
or a flag never waits for a mail server. The task takes one job at a time:

1. it *claims* the mail in the store (:meth:`MailClaims.claim_mail`: the player opted in and
   has an address, is under the daily cap, and was not mailed about this game within the
   window; a game's end is not held back by the window). A refused claim is the end of the
   job, but a turn held back by the window is marked due at its end: :meth:`Mailer.sweep`
   (every ``sweep_s``) mails it then if it is still the player's turn. A claim that cannot
   reach the database is tried again with back-off.
2. it sends it, trying again with back-off (``retry_base_s`` doubling to ``retry_max_s``) up
   to ``attempts`` times, then gives the mail up. A claimed mail is sent at most once: a crash
   between the claim and the send loses that mail rather than sending it twice after a restart.

Failures are logged once per run of failures (a WARNING naming the cause and the masked
address, :func:`server.hub.mail_address.masked`), and the recovery once (INFO): a mail server
that is down for an hour writes two lines, not one per move. Addresses never appear in full.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Literal, Protocol

from server.config import Settings
from server.hub.mail_address import masked
from server.rules import get_variant

__all__ = ["MailClaims", "MailConfig", "MailJob", "Mailer", "compose"]

logger = logging.getLogger(__name__)

Security = Literal["none", "starttls", "tls"]


class DueTurn(Protocol):
    """A turn mail held back by the window, now due (``server.store.notify.DueMail``)."""

    @property
    def player_id(self) -> int: ...
    @property
    def game_id(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def opponent(self) -> str: ...
    @property
    def your_turn(self) -> bool: ...


class MailClaims(Protocol):
    """The store's claims on mails (``server.store.notify.NotifyStore``)."""

    async def claim_mail(
        self,
        player_id: int,
        game_id: str,
        *,
        window: timedelta,
        daily_cap: int,
        now: datetime | None = None,
        defer: bool = False,
    ) -> str | None: ...

    async def take_due_mails(
        self, now: datetime | None = None, limit: int = 100
    ) -> Sequence[DueTurn]: ...


@dataclass(frozen=True, slots=True)
class MailConfig:
    """The ``[mail]`` settings (config/default.toml) and the site's public address."""

    host: str
    port: int
    sender: str
    security: Security
    user: str
    password: str
    timeout_s: float
    window_s: float
    daily_cap: int
    queue_limit: int
    attempts: int
    retry_base_s: float
    retry_max_s: float
    sweep_s: float
    public_url: str

    @classmethod
    def from_settings(cls, settings: Settings) -> MailConfig:
        security: Security = (
            "tls"
            if settings.mail_security == "tls"
            else "starttls"
            if settings.mail_security == "starttls"
            else "none"
        )
        return cls(
            host=settings.mail_host,
            port=settings.mail_port,
            sender=settings.mail_from,
            security=security,
            user=settings.mail_user,
            password=settings.mail_password,
            timeout_s=settings.mail_timeout_s,
            window_s=settings.mail_window_s,
            daily_cap=settings.mail_daily_cap,
            queue_limit=settings.mail_queue_limit,
            attempts=settings.mail_attempts,
            retry_base_s=settings.mail_retry_base_s,
            retry_max_s=settings.mail_retry_max_s,
            sweep_s=settings.mail_sweep_s,
            public_url=settings.public_url.rstrip("/"),
        )


@dataclass(frozen=True, slots=True)
class MailJob:
    """One mail to one player about one game: their turn, or the game's end."""

    player: int
    """The player's store id."""
    name: str
    opponent: str
    game_id: str
    variant: str
    ended: bool
    result: str | None
    side: int
    """The player's side (0 first), to word the result."""


def _outcome(job: MailJob) -> str:
    if job.result is None:
        return "the game was aborted"
    if job.result == "1/2-1/2":
        return "it is a draw"
    won = (job.result == "1-0") == (job.side == 0)
    return "you won" if won else "you lost"


def compose(job: MailJob, address: str, config: MailConfig) -> EmailMessage:
    """The mail of ``job`` to ``address``: a plain-text message with the game's link."""
    title = get_variant(job.variant).title
    link = f"{config.public_url}/game/{job.game_id}"
    if job.ended:
        outcome = _outcome(job)
        subject = f"Game over against {job.opponent}: {outcome}"
        first = f"Your {title} game against {job.opponent} is over: {outcome}."
    else:
        subject = f"Your turn against {job.opponent} ({title})"
        first = f"It is your turn in your {title} game against {job.opponent}."
    message = EmailMessage()
    message["From"] = config.sender
    message["To"] = address
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain=config.sender.rpartition("@")[2] or None)
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-replies to it
    message.set_content(
        f"{job.name},\n\n{first}\n\n{link}\n\n"
        f"You get this mail because you turned on e-mail notifications; turn them off under "
        f"Settings at {config.public_url}/.\n"
    )
    return message


class Mailer:
    """See the module docstring. :meth:`start` the task, :meth:`close` it."""

    def __init__(
        self,
        config: MailConfig,
        claims: MailClaims,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.config = config
        self._claims = claims
        self._sleep = sleep
        self._now = now
        self._queue: asyncio.Queue[MailJob] = asyncio.Queue(config.queue_limit)
        self._task: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._failing = False
        self._overflowing = False
        self.sent = 0
        """Mails handed to the SMTP server so far."""
        self.dropped = 0
        """Jobs dropped: the queue was full, or the mail was given up after its attempts."""

    def start(self) -> None:
        """Start the sending task and the sweep for held-back turns (every ``sweep_s``)."""
        loop = asyncio.get_running_loop()
        if self._task is None:
            self._task = loop.create_task(self._run(), name="mailer")
        if self._sweeper is None:
            self._sweeper = loop.create_task(self._sweep_forever(), name="mail sweep")

    async def close(self) -> None:
        """Stop the tasks; queued mails are dropped (at most once: they are not claimed yet)."""
        for task in (self._task, self._sweeper):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._sweeper = None

    async def sweep(self) -> int:
        """Queue the turn mails held back by the window whose time has come and that are
        still the player's turn; return how many. Every hub of a cluster sweeps: the store
        hands each due mail to one of them."""
        queued = 0
        for due in await self._claims.take_due_mails(self._now()):
            if due.your_turn:
                self.submit(
                    MailJob(
                        player=due.player_id,
                        name=due.name,
                        opponent=due.opponent,
                        game_id=due.game_id,
                        variant=due.variant,
                        ended=False,
                        result=None,
                        side=due.index,
                    )
                )
                queued += 1
        return queued

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.config.sweep_s)
            try:
                await self.sweep()
            except Exception as error:  # the store is down: the next sweep tries again
                logger.debug("mail sweep failed: %s", error.__class__.__name__)

    def submit(self, job: MailJob) -> None:
        """Queue ``job`` (never waits; when the queue is full the job is dropped, logged once
        per overflow)."""
        try:
            self._queue.put_nowait(job)
        except asyncio.QueueFull:
            self.dropped += 1
            if not self._overflowing:
                self._overflowing = True
                logger.warning("mail queue full (%d): mails are dropped", self.config.queue_limit)
            return
        self._overflowing = False

    async def drained(self) -> None:
        """Return once every job queued so far is done (sent, refused or given up)."""
        await self._queue.join()

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    async def _run(self) -> None:
        while True:
            job = await self._queue.get()
            try:
                await self._deliver(job)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug: never let it end the task
                logger.exception("mail for game %s failed", job.game_id)
            finally:
                self._queue.task_done()

    async def _deliver(self, job: MailJob) -> None:
        config = self.config
        window = timedelta(0) if job.ended else timedelta(seconds=config.window_s)
        delay = config.retry_base_s
        for attempt in range(1, config.attempts + 1):
            try:
                address = await self._claims.claim_mail(
                    job.player,
                    job.game_id,
                    window=window,
                    daily_cap=config.daily_cap,
                    now=self._now(),
                    defer=not job.ended,
                )
                break
            except Exception as error:  # the store is down: try again later
                self._failed(f"store: {error.__class__.__name__}", job, None, attempt)
            await self._sleep(delay)
            delay = min(delay * 2, config.retry_max_s)
        else:
            self.dropped += 1
            return
        if address is None:
            return
        # Imported here: a server that sends no mail never loads the SMTP client (whose modules
        # would only be more objects on the heap for every timed collection to walk).
        import aiosmtplib

        message = compose(job, address, config)
        delay = config.retry_base_s
        for attempt in range(1, config.attempts + 1):
            try:
                await aiosmtplib.send(
                    message,
                    hostname=config.host,
                    port=config.port,
                    username=config.user or None,
                    password=config.password or None,
                    use_tls=config.security == "tls",
                    start_tls=config.security == "starttls",
                    timeout=config.timeout_s,
                )
            except (aiosmtplib.SMTPException, OSError) as error:
                self._failed(error.__class__.__name__, job, address, attempt)
                await self._sleep(delay)
                delay = min(delay * 2, config.retry_max_s)
                continue
            self.sent += 1
            if self._failing:
                self._failing = False
                logger.info("mail sending works again")
            return
        self.dropped += 1
        logger.warning(
            "mail to %s about game %s given up after %d attempts",
            masked(address),
            job.game_id,
            config.attempts,
        )

    def _failed(self, cause: str, job: MailJob, address: str | None, attempt: int) -> None:
        if self._failing:
            logger.debug("mail attempt %d for game %s failed: %s", attempt, job.game_id, cause)
            return
        self._failing = True
        logger.warning(
            "mail for game %s to %s failed (%s); retrying with back-off (logged once until it "
            "works again)",
            job.game_id,
            "(not claimed yet)" if address is None else masked(address),
            cause,
        )

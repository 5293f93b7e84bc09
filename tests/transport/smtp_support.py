"""A real SMTP server for the tests (aiosmtpd's protocol on the test's own event loop, on an
ephemeral port): every mail it accepts is parsed and put on a queue."""

from __future__ import annotations

import asyncio
import email
import email.policy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session


@dataclass
class Received:
    """One mail as the SMTP server got it: the envelope's recipients and the parsed message."""

    recipients: list[str]
    message: EmailMessage

    @property
    def body(self) -> str:
        part = self.message.get_body(("plain",))
        assert part is not None
        return str(part.get_content())


class _Inbox:
    def __init__(self) -> None:
        self.mails: asyncio.Queue[Received] = asyncio.Queue()

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or b""
        parsed = email.message_from_bytes(content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.mails.put_nowait(Received(list(envelope.rcpt_tos), parsed))
        return "250 OK"


@dataclass
class SmtpServer:
    port: int
    inbox: _Inbox

    async def next(self, timeout: float = 10.0) -> Received:
        return await asyncio.wait_for(self.inbox.mails.get(), timeout)

    def pending(self) -> int:
        return self.inbox.mails.qsize()


@asynccontextmanager
async def smtp_server(port: int = 0) -> AsyncIterator[SmtpServer]:
    """A server on ``port`` (0: an ephemeral one), closed on leaving."""
    inbox = _Inbox()
    loop = asyncio.get_running_loop()

    def protocol() -> Any:
        return SMTP(inbox, hostname="test.smtp", loop=loop)

    server = await loop.create_server(protocol, "127.0.0.1", port)
    try:
        yield SmtpServer(server.sockets[0].getsockname()[1], inbox)
    finally:
        server.close()
        await server.wait_closed()

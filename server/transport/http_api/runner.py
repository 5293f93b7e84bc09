"""Serves the HTTP API's application on connections the public listener hands over."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web, web_response
from aiohttp.http_exceptions import BadHttpMessage

from server.transport.admission import LINGER_S
from server.transport.headers import SERVER_NAME
from server.transport.http_api.app import build_application
from server.transport.http_api.context import ApiContext

__all__ = ["SHUTDOWN_GRACE_S", "HttpApiServer"]

SHUTDOWN_GRACE_S = 2.0
"""How long requests in progress may take to finish when the server stops (open streams end at
once: :meth:`BotLinks.close`)."""


class UnparsableRequests(logging.Filter):
    """aiohttp logs a request it cannot parse (a raw non-ASCII byte in its path, a broken
    request line or header) at ERROR with a traceback, after answering it 400 and closing: any
    client could fill the server's log that way. Such a record passes as one INFO line, without
    the traceback; every other record of aiohttp's server is left as it is."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, BadHttpMessage):
            record.msg = f"{record.getMessage()}: {type(error).__name__} (answered 400)"
            record.args = ()
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.exc_info = record.exc_text = None
        return True


_AIOHTTP_SERVER_LOG = logging.getLogger("aiohttp.server")


def _name_the_server() -> None:
    """aiohttp's answers to requests it cannot parse (400) never reach the application, whose
    ``on_response_prepare`` names the server (``app.py``): they take the ``Server`` header from
    the module constant ``aiohttp.web_response.SERVER_SOFTWARE`` (``Python/3.11 aiohttp/3.x``).
    Set that constant to :data:`SERVER_NAME` too (aiohttp's client has its own copy of it, for
    ``User-Agent``); ``test_security_headers.py`` fails if aiohttp stops reading it."""
    web_response.SERVER_SOFTWARE = SERVER_NAME


class HttpApiServer:
    """aiohttp's server for the HTTP API, without a listening socket of its own."""

    def __init__(self, context: ApiContext) -> None:
        self.context = context
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        _name_the_server()
        if not any(isinstance(f, UnparsableRequests) for f in _AIOHTTP_SERVER_LOG.filters):
            _AIOHTTP_SERVER_LOG.addFilter(UnparsableRequests())
        runner = web.AppRunner(
            build_application(self.context),
            handle_signals=False,
            access_log=None,
            shutdown_timeout=SHUTDOWN_GRACE_S,
            # An idle kept-alive connection is closed after this long; aiohttp's timer also
            # runs while a later request's headers arrive (and a first one's, after the public
            # listener's own header_timeout_s), so it bounds a trickled head too.
            keepalive_timeout=self.context.settings.http_keepalive_s,
            # After an answer given before its body was read whole (a 408, a 413), the rest is
            # read and dropped this long at most, so that the answer is not lost to a reset
            # (aiohttp's default, 10 s, would let a trickled body hold the connection on).
            lingering_time=LINGER_S,
        )
        await runner.setup()
        self._runner = runner

    def protocol(self) -> asyncio.BaseProtocol:
        """aiohttp's protocol for one accepted connection."""
        assert self._runner is not None and self._runner.server is not None, "not started"
        return self._runner.server()

    @property
    def connections(self) -> int:
        server = None if self._runner is None else self._runner.server
        return 0 if server is None else len(server.connections)

    async def close(self) -> None:
        """End the streams, let the requests in progress finish, close the connections."""
        self.context.links.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

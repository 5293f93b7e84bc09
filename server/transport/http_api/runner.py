"""Serves the HTTP API's application on connections the public listener hands over."""

from __future__ import annotations

import asyncio

from aiohttp import web

from server.transport.http_api.app import build_application
from server.transport.http_api.context import ApiContext

__all__ = ["SHUTDOWN_GRACE_S", "HttpApiServer"]

SHUTDOWN_GRACE_S = 2.0
"""How long requests in progress may take to finish when the server stops (open streams end at
once: they watch :attr:`ApiContext.closing`)."""
KEEPALIVE_S = 75.0
"""An idle kept-alive connection is closed after this long."""


class HttpApiServer:
    """aiohttp's server for the HTTP API, without a listening socket of its own."""

    def __init__(self, context: ApiContext) -> None:
        self.context = context
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        runner = web.AppRunner(
            build_application(self.context),
            handle_signals=False,
            access_log=None,
            shutdown_timeout=SHUTDOWN_GRACE_S,
            keepalive_timeout=KEEPALIVE_S,
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
        self.context.closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

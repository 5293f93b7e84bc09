"""Security headers and the ``Server`` header on every HTTP answer of the public port (since
309c9b9): the websocket server's pages and refusals, every route of the HTTP API's table, the
answer to a request aiohttp cannot parse; and the token page works under its policy (its inline
script and style allowed by hash, nothing else)."""

from __future__ import annotations

import asyncio
import re

import aiohttp
from ws_support import StartApp

from server.transport.headers import CONTENT_SECURITY_POLICY, SECURITY_HEADERS, page_policy
from server.transport.http_api.tokens import PAGE

PAGES = ["/", "/static/app.js", "/static/app.css", "/game/u8jzPde0", "/review", "/healthz",
         "/api/variants", "/api/games", "/api/games/nosuchgame", "/nowhere", "/ws"]  # fmt: skip


def _secured(headers: aiohttp.typedefs.LooseHeaders, where: str) -> None:
    got = dict(headers)  # type: ignore[arg-type]
    assert got.get("Server") == "variant-hub", (where, got)
    for name, value in SECURITY_HEADERS:
        if name == "Content-Security-Policy" and where.endswith("/api/token/page"):
            value = page_policy(PAGE)
        assert got.get(name) == value, (where, name, got)


async def test_every_answer_of_both_servers_carries_the_headers(start_app: StartApp) -> None:
    app = await start_app()
    base = f"http://127.0.0.1:{app.port}"
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    routes = app.api._runner.app.router.routes()  # type: ignore[union-attr]
    api = sorted(
        {(r.method, re.sub(r"\{[^}]*\}", "x", r.resource.canonical)) for r in routes}  # type: ignore[union-attr]
    )
    assert len(api) > 20, api
    async with aiohttp.ClientSession() as http:
        for path in PAGES:  # websockets' side (its own 426 on the websocket path included)
            async with http.get(base + path) as answer:
                _secured(answer.headers, path)
        for method, path in api:  # aiohttp's side: every route, without credentials
            if method == "HEAD":
                continue
            async with http.request(method, base + path, timeout=aiohttp.ClientTimeout(10)) as a:
                if a.content_type == "application/x-ndjson":
                    a.close()
                _secured(a.headers, f"{method} {path}")
        async with http.get(base + "/api/account") as kept_alive:  # aiohttp: 401
            _secured(kept_alive.headers, "/api/account")
        async with http.get(base + "/static/app.js") as page:  # maybe on the same connection
            _secured(page.headers, "/static/app.js again")
    # A request aiohttp cannot parse (a raw non-ASCII byte in the path) is answered by aiohttp
    # itself, outside the application: still no version.
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    writer.write(b"GET /api/account/\xff HTTP/1.1\r\nHost: x\r\n\r\n")
    head = (await asyncio.wait_for(reader.read(4096), 10)).decode("latin-1")
    writer.close()
    assert (
        head.startswith(("HTTP/1.0 400", "HTTP/1.1 400")) and "\r\nServer: variant-hub\r\n" in head
    ), head
    # The websocket's own handshake answer names the server without versions too.
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    writer.write(
        b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).decode("latin-1")
    writer.close()
    assert head.startswith("HTTP/1.1 101") and "\r\nServer: variant-hub\r\n" in head, head

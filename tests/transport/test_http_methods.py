"""Every method on every path of the public address gets an HTTP answer (before 34b24c5 a POST
to a path nobody serves got none, the connection closed without a status line, since websockets'
server reads only GETs). Over both route tables: the HTTP API's (aiohttp) and the websocket
server's pages (server/transport/http.py), and paths neither serves: a status line always; a
method the path is served by is never 404/405; another method on a served path is a 405 whose
``Allow`` names exactly the path's methods; a path nobody serves is a 404 for every method."""

from __future__ import annotations

import asyncio
import re

from ws_support import StartApp

from server.app import App
from server.transport.http_api.app import ROUTE_MODULES

METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")
PAGE_METHODS = frozenset({"GET", "HEAD"})

PAGES = ("/", "/review", "/lobby", "/game/abcdefgh", "/player/bob", "/healthz", "/api/variants")
PAGES_WITH_QUERY = ("/api/games?limit=1",)
NOWHERE = (
    "/foo",
    "/api/tournament/abcdefgh/nothing",
    "/api/bot/nothing",
    "/api/bot/game/x/nothing",
    "/fishnet/nothing",
    "/static/nothing.js",
    "/game/a/b",
)


def _parts(template: str) -> list[tuple[str, str | None]]:
    """A route template as (literal text, None) and (``{name}``'s pattern, "") pieces; a
    pattern may hold braces of its own (``{id:[0-9]{1,16}}``)."""
    pieces: list[tuple[str, str | None]] = []
    depth, start = 0, 0
    for i, char in enumerate(template):
        if char == "{":
            if depth == 0:
                pieces.append((template[start:i], None))
                start = i + 1
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                _, _, pattern = template[start:i].partition(":")
                pieces.append((pattern or "[^/]+", ""))
                start = i + 1
    pieces.append((template[start:], None))
    return pieces


def _concrete(template: str) -> str:
    """A path a route's template takes (each ``{name}`` filled in)."""
    return "".join(text if kind is None else "abc" for text, kind in _parts(template))


def _matches(template: str, path: str) -> bool:
    pattern = "".join(
        re.escape(text) if kind is None else f"(?:{text})" for text, kind in _parts(template)
    )
    return re.fullmatch(pattern, path) is not None


def api_routes() -> dict[str, frozenset[str]]:
    """Each path of the HTTP API's route table (filled in) and the methods it is served by
    (a GET route takes HEAD too)."""
    routes = [(route.method, route.path) for module in ROUTE_MODULES for route in module.routes]  # type: ignore[attr-defined]
    served: dict[str, frozenset[str]] = {}
    for _, template in routes:
        path = _concrete(template)
        methods = {method for method, other in routes if _matches(other, path)}
        if "GET" in methods:
            methods.add("HEAD")
        served[path] = frozenset(methods)
    return served


async def _status(app: App, method: str, target: str) -> tuple[int, dict[str, str]]:
    """The status and headers of the answer to ``method target`` on a connection of its own."""
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    try:
        head = f"{method} {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
        if method in ("POST", "PUT", "PATCH"):
            head += "Content-Length: 0\r\n"
        writer.write((head + "\r\n").encode())
        answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    finally:
        writer.close()
    line, *fields = answer.decode("latin-1").split("\r\n")
    assert re.fullmatch(r"HTTP/1\.1 \d{3} .*", line), (method, target, line)
    headers = {}
    for field in fields:
        if field:
            name, _, value = field.partition(":")
            headers[name.strip().lower()] = value.strip()
    return int(line.split()[1]), headers


async def test_every_method_on_every_path_gets_an_answer(start_app: StartApp) -> None:
    app = await start_app()
    table: dict[str, frozenset[str]] = dict(api_routes())
    table.update({path: PAGE_METHODS for path in (*PAGES, *PAGES_WITH_QUERY)})
    table[app.settings.ws_path] = PAGE_METHODS  # a GET without Upgrade: 426
    table.update({path: frozenset() for path in NOWHERE})
    assert len(table) > 40
    wrong: list[str] = []
    for target, served in table.items():
        for method in METHODS:
            status, headers = await _status(app, method, target)
            if method in served:
                if status in (404, 405) and not (status == 404 and "abc" in target):
                    wrong.append(f"{method} {target}: {status}, served by {sorted(served)}")
            elif served:
                allow = {m.strip() for m in headers.get("allow", "").split(",") if m.strip()}
                if status != 405 or allow != served:
                    wrong.append(f"{method} {target}: {status} Allow {sorted(allow)}")
            elif status != 404:
                wrong.append(f"{method} {target}: {status}, expected 404")
    assert not wrong, "\n".join(wrong)

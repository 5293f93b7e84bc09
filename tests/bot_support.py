"""Bots for the tests: accounts upgraded through the HTTP API, driven by berserk (unmodified).

berserk is synchronous (requests): its calls run in threads (:func:`call`), and each NDJSON
stream is read by a thread of its own that hands the lines to the event loop
(:class:`StreamReader`). A stream's thread ends when the server ends the stream (game over,
server stopping) or the test closes it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import aiohttp
import berserk
import requests

from server.app import App

Event = dict[str, Any]
TIMEOUT = 15.0


def base_url(app: App | str) -> str:
    """The HTTP base URL of an app, or the given one."""
    return app if isinstance(app, str) else f"http://127.0.0.1:{app.port}"


async def call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(function, *args, **kwargs)


async def new_token(app: App | str, name: str, password: str = "correct horse") -> str:
    """A personal API token for an existing account (``POST /api/token`` by password)."""
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"{base_url(app)}/api/token",
            data={"name": name, "password": password, "description": "test bot"},
        ) as answer,
    ):
        body = await answer.json()
        assert answer.status == 200, body
        token: str = body["token"]
        return token


class Bot:
    """One berserk client with its account's token."""

    def __init__(self, app: App | str, name: str, token: str) -> None:
        self.app = app
        self.name = name
        self.token = token
        self.session = berserk.TokenSession(token)
        self.client = berserk.Client(self.session, base_url=base_url(app))
        self.streams: list[StreamReader] = []
        self._opening: dict[str, list[asyncio.Future[int]]] = {}
        self._loop = asyncio.get_running_loop()
        self.session.hooks["response"].append(self._opened)

    def _opened(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        """requests' response hook (in the stream's thread): the headers have arrived, so
        the server has the stream open (the bot's link is connected to the hub)."""
        path = response.request.path_url.split("?", 1)[0]
        waiting = self._opening.get(path)
        if waiting:
            future = waiting.pop(0)
            self._loop.call_soon_threadsafe(
                lambda: future.done() or future.set_result(response.status_code)
            )

    def _expect(self, path: str) -> asyncio.Future[int]:
        future: asyncio.Future[int] = self._loop.create_future()
        self._opening.setdefault(path, []).append(future)
        return future

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        """A request berserk has no method for (its session, its token)."""
        return self.session.post(base_url(self.app) + path, timeout=TIMEOUT, **kwargs)

    async def events(self) -> StreamReader:
        """The event stream, once the server has answered its request (the bot is online)."""
        opened = self._expect("/api/stream/event")
        reader = StreamReader(self.client.bots.stream_incoming_events())
        self.streams.append(reader)
        assert await asyncio.wait_for(opened, TIMEOUT) == 200
        return reader

    async def raw(self, path: str) -> StreamReader:
        """An NDJSON stream (``path``) read without berserk, once the server answered its
        request: each line JSON-decoded as sent (berserk turns clock fields into timedeltas and
        skips blank lines); a blank keep-alive line is ``{}``."""
        response = await call(
            self.session.get, base_url(self.app) + path, stream=True, timeout=TIMEOUT
        )
        assert response.status_code == 200, response.text
        assert response.headers["Content-Type"].startswith("application/x-ndjson")

        def lines() -> Iterator[Event]:
            for line in response.iter_lines():
                yield json.loads(line) if line else {}

        reader = StreamReader(lines())
        self.streams.append(reader)
        return reader

    async def game(self, game_id: str) -> StreamReader:
        opened = self._expect(f"/api/bot/game/stream/{game_id}")
        reader = StreamReader(self.client.bots.stream_game_state(game_id))
        self.streams.append(reader)
        await asyncio.wait_for(opened, TIMEOUT)
        return reader


class StreamReader:
    """The lines of one berserk stream, read in a thread, awaited here."""

    def __init__(self, lines: Iterator[Event]) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Event | BaseException | None] = asyncio.Queue()
        self._lines = lines
        self.seen: list[Event] = []
        self.backlog: list[Event] = []
        self.ended = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for line in self._lines:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, line)
        except BaseException as error:  # the stream broke: say so
            self._loop.call_soon_threadsafe(self._queue.put_nowait, error)
            return
        self._loop.call_soon_threadsafe(self._queue.put_nowait, None)

    async def next(self, match: str | Callable[[Event], bool] | None = None) -> Event:
        """The first line (skipped ones first) of ``type`` ``match`` or satisfying it."""
        if match is None:
            test: Callable[[Event], bool] = lambda e: True  # noqa: E731
        elif isinstance(match, str):
            test = lambda e: e.get("type") == match  # noqa: E731
        else:
            test = match
        for index, event in enumerate(self.backlog):
            if test(event):
                del self.backlog[index]
                return event
        while True:
            item = await asyncio.wait_for(self._queue.get(), TIMEOUT)
            if item is None:
                self.ended = True
                raise EOFError("the stream ended")
            if isinstance(item, BaseException):
                raise item
            self.seen.append(item)
            if test(item):
                return item
            self.backlog.append(item)

    async def end(self) -> None:
        """Wait until the server ends the stream (nothing else may come first)."""
        item = await asyncio.wait_for(self._queue.get(), TIMEOUT)
        assert item is None, f"expected the end of the stream, got {item!r}"
        self.ended = True


async def make_bot(app: App, open_client: Any, name: str) -> Bot:
    """Register ``name`` (websocket), get a token, upgrade to a bot (berserk)."""
    client = await open_client(app, name)
    welcome = await client.register(name)
    assert welcome["t"] == "welcome", welcome
    await client.close()
    bot = Bot(app, name, await new_token(app, name))
    await call(bot.client.account.upgrade_to_bot)
    return bot


async def challenge_bot(
    human: Any,
    bot: Bot,
    events: StreamReader,
    variant: str,
    colour: str,
    tc: dict[str, Any] | None = None,
) -> str:
    """The websocket player ``human`` (a ``ws_support.Client``) challenges the bot (``colour``:
    the human's side), which accepts with berserk: the game id, once both sides have it."""
    terms = tc or {"kind": "fischer", "base_s": 60, "inc_s": 0}
    answer = await human.ok(
        "match", {"to": bot.name, "variant": variant, "tc": terms, "colour": colour}
    )
    challenge = await events.next("challenge")
    assert challenge["challenge"]["id"] == str(answer["challenge"])
    assert challenge["challenge"]["variant"]["key"] == variant
    assert challenge["challenge"]["challenger"]["name"] == human.name
    await call(bot.client.bots.accept_challenge, challenge["challenge"]["id"])
    start = await events.next("gameStart")
    game_id: str = start["game"]["gameId"]
    assert start["game"]["color"] == ("black" if colour == "first" else "white")
    await human.next(lambda m: m["t"] == "game" and m["d"]["game"] == game_id)
    return game_id

"""A raw TCP client for the ICS port: sends lines, waits for lines matching patterns."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable
from typing import Any

from server.app import App

TIMEOUT = 10.0
OpenIcs = Callable[[App], Awaitable["IcsClient"]]
PROMPT = "fics% "


class IcsClient:
    """One telnet-like connection. ``seen`` holds every line received (prompts stripped);
    :meth:`expect` scans forward from the last match, waiting for more lines if needed."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.seen: list[str] = []
        self.pos = 0
        self.name = ""
        self._partial = ""
        self.closed = False

    @classmethod
    async def open(cls, port: int, **kwargs: Any) -> IcsClient:
        """``kwargs`` go to ``asyncio.open_connection`` (``local_addr`` …)."""
        reader, writer = await asyncio.open_connection("127.0.0.1", port, **kwargs)
        return cls(reader, writer)

    @classmethod
    async def guest(cls, app: App) -> IcsClient:
        """A guest logged in, with style 12 set (as XBoard does)."""
        client = await cls.open(app.ics_port)
        await client.send("guest")
        match = await client.expect(r'Press return to enter the server as "(\S+)":')
        client.name = match.group(1)
        await client.send("")
        await client.expect(r"^\*\*\*\* Starting FICS session as")
        await client.send("set style 12")
        await client.expect(r"^Style 12 set\.")
        return client

    @classmethod
    async def registered(cls, app: App, name: str, password: str = "correct horse") -> IcsClient:
        """A registered player (the account made here) logged in, with style 12 set."""
        await app.accounts.register(name, password)
        client = await cls.open(app.ics_port)
        await client.send(name)
        await client.send(password)
        await client.expect(rf"^\*\*\*\* Starting FICS session as {name} \*\*\*\*$")
        client.name = name
        await client.send("set style 12")
        await client.expect(r"^Style 12 set\.")
        return client

    async def send(self, line: str) -> None:
        self.writer.write(line.encode() + b"\r\n")
        await self.writer.drain()

    async def _read_more(self) -> None:
        data = await self.reader.read(65536)
        if not data:
            self.closed = True
            raise ConnectionError(f"{self.name}: connection closed; seen {self.seen[-10:]}")
        text = self._partial + data.decode("utf-8", "replace")
        *complete, self._partial = text.split("\n")
        for raw in complete:
            line = raw.replace("\r", "")
            while line.startswith(PROMPT):
                line = line[len(PROMPT) :]
            self.seen.append(line)
        # A prompt waiting for input (no line end) counts as a line of its own.
        if self._partial in ("login: ", "password: "):
            self.seen.append(self._partial.strip())
            self._partial = ""

    async def expect(self, pattern: str, timeout: float = TIMEOUT) -> re.Match[str]:
        """The next line (from the last match on) that matches ``pattern`` (``re.search``)."""
        regex = re.compile(pattern)

        async def scan() -> re.Match[str]:
            while True:
                while self.pos < len(self.seen):
                    line = self.seen[self.pos]
                    self.pos += 1
                    match = regex.search(line)
                    if match:
                        return match
                await self._read_more()

        try:
            return await asyncio.wait_for(scan(), timeout)
        except TimeoutError:
            raise AssertionError(
                f"{self.name}: no line matching {pattern!r}; last lines: {self.seen[-15:]}"
            ) from None

    async def board(self, timeout: float = TIMEOUT) -> list[str]:
        """The fields of the next style-12 line."""
        return (await self.expect(r"^<12> ", timeout)).string.split()

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()


def board_fields(fields: list[str], ranks: int) -> dict[str, str]:
    """Named fields of a split style-12 line on a board with ``ranks`` ranks."""
    names = ["turn", "double_push", "wk", "wq", "bk", "bq", "irreversible", "game", "white",
             "black", "relation", "initial", "increment", "white_strength", "black_strength",
             "white_time", "black_time", "move_number", "verbose", "elapsed", "pretty", "flip",
             "ticking", "lag"]  # fmt: skip
    rest = fields[1 + ranks :]
    values = dict(zip(names, rest, strict=False))
    values["board"] = " ".join(fields[1 : 1 + ranks])
    return values


async def play_moves(white: IcsClient, black: IcsClient, moves: list[str]) -> list[list[str]]:
    """White and black type ``moves`` in turn; returns the board each move produced, as the
    players saw it (the same for both, but for the viewer's relation and flip)."""
    boards = []
    for ply, move in enumerate(moves):
        await (white if ply % 2 == 0 else black).send(move)
        seen = [await client.board() for client in (white, black)]
        assert _without_viewer(seen[0]) == _without_viewer(seen[1]), seen
        boards.append(seen[0])
    return boards


def _without_viewer(fields: list[str]) -> list[str]:
    """A style-12 line without the viewer's relation (14th field from the end) and flip (3rd)."""
    return fields[:-14] + fields[-13:-3] + fields[-2:]


async def start_spartan(alice: IcsClient, bob: IcsClient, minutes: int = 5) -> int:
    """``alice`` (white) and ``bob`` start an unrated Spartan game; returns its number."""
    await alice.send(f"match {bob.name} {minutes} 0 spartan white")
    await bob.expect(r"^Challenge: ")
    await bob.send(f"accept {alice.name}")
    number = 0
    for client in (alice, bob):
        number = int((await client.expect(r"^\{Game (\d+) \(")).group(1))
        await client.board()
    return number


def game_of(app: App, name: str) -> str:
    """The id of the game player ``name`` plays."""
    info = next(i for i in app.hub.online_players() if i.name == name)
    game_id = app.hub.active_game(info.id)
    assert game_id is not None, name
    return game_id


def game_state(app: App, game_id: str) -> tuple[object, ...]:
    """What no malformed line may change in a game: ply, position, status, result, offers."""
    room = app.hub.room(game_id)
    assert room is not None
    return (room.game.ply, room.game.fen(), room.status, room.result,
            tuple(box.pending_from for box in room.state.offer_boxes.values()))  # fmt: skip

"""Property-based fuzzing of the live ICS port (since 0a912b6) with hypothesis.

Lines drawn by hypothesis, each ending with one of the line ends telnet clients send (CR LF,
CR NUL, LF) — random bytes, telnet IAC sequences (negotiation, subnegotiation,
lone and doubled IAC), NULs, lines of 1 to 70 kB, and every command word (aliases and abbreviated
forms included) followed by junk arguments (format strings, paths, non-ASCII digits, over-long
ids and names, any printable text) — go over raw TCP to a real server on port 0, from both
players of a running game, from an observer and from a connection that has not logged in. After
each batch every logged-in connection answers a sentinel (``help sentinel-N``, so every line
before it was read and answered), the game is as it was (ply, position, status, result, offers),
and then it goes on: the side to move plays a legal move that both players see. Games are played
to MAX_PLIES and resigned; a new one starts. Nothing is logged as an error or with a traceback.

Lines are drawn derandomized (the same on every run); the server is stateful, so a failure is
reported with the batch rather than shrunk. Sizes per backend: in CI 1,500 (SQLite) / 1,000
(PostgreSQL) lines; with ``--long`` 60,000 (about 5 minutes on SQLite). Draws that spell a
well-formed command (``q`` is ``quit``, ``e4`` a move) are left out: they may rightly change a game.
"""

from __future__ import annotations

import logging
import random
import re

import pytest
from fuzz_values import draw_examples
from hypothesis import strategies as st
from ics_support import IcsClient, board_fields, game_of, game_state, start_spartan
from support import wait_until
from ws_support import UNLIMITED_READS, StartApp

from server.app import App
from server.transport.ics.parse import ALIASES, COMMANDS, QUIET, looks_like_move, split_command
from server.transport.ics.server import MAX_LINE
from server.transport.ics.telnet import TelnetLines

CI_LINES = {"sqlite": 1500, "postgresql": 1000}
LONG_LINES = 60_000
BATCH = 20
MAX_PLIES = 30
FAST = {"rate_limit_per_s": 100_000.0, "rate_limit_burst": 100_000, **UNLIMITED_READS}

pytestmark = [
    pytest.mark.timeout(3600),
    pytest.mark.parametrize("backend", ["sqlite", "postgresql"]),
]

# ------------------------------------------------------------------------------ the lines

WORDS = sorted({*COMMANDS, *ALIASES, *QUIET, *(c[:3] for c in COMMANDS), "$resign", "@draw"})
TOKENS = [
    "%s%s%n", "%n%n%n%n", "../../etc/passwd", "#" + "Z" * 40, "a" * 20, "a" * 17, "#", "-1",
    "99999999999999", "²", "½", "١٢", "１２", "0x10", "1e9", "NaN", "'", '"', "\\", "`id`",
    "$(reboot)", "<12>", "{Game 1}", "Guest-", "guest", "*", "?", "-", "--", "=", "+", "@",
    "e2e4", "P@c3", "o-o", "wild", "wild 99", "byoyomi/0", "byoyomi/99", "9999-0", "0-0",
    "5 0 spartan rated", "100000 0", "seekinfo", "style 13", "ms 2", "\ufeff", "\u200b",
    "\U0001f600", "ÿ", "\x7f", "\x1b[2J", "\x08\x08",
]  # fmt: skip
printable = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00")
junk = st.one_of(
    st.text(printable, min_size=1, max_size=60),
    st.sampled_from(TOKENS),
    st.lists(st.one_of(st.sampled_from(TOKENS), st.text(printable, max_size=12)), min_size=1,
             max_size=5).map(" ".join),
).filter(lambda text: text.strip() != "")  # fmt: skip
command_lines = st.builds(
    lambda word, args: f"{word} {args}".encode(), st.sampled_from(WORDS), junk
)
IAC = [b"\xff\xfb\x01", b"\xff\xfd\x03", b"\xff\xfc\x22", b"\xff\xfe\x18", b"\xff\xfa\x18\x01\xff\xf0",
       b"\xff\xfa\x1f\x00\x50", b"\xff\xf0", b"\xff\xff", b"\xff", b"\xff\xf4", b"\xff\xf1"]  # fmt: skip
telnet = st.lists(
    st.one_of(st.sampled_from(IAC), st.binary(max_size=8), command_lines), min_size=1, max_size=6
).map(b"".join)


def _with_nul(parts: tuple[bytes, int]) -> bytes:
    line, at = parts
    at %= len(line) + 1
    return line[:at] + b"\x00" + line[at:]


nuls = st.tuples(st.one_of(command_lines, st.binary(max_size=40)), st.integers(0, 200)).map(
    _with_nul
)
long_lines = st.builds(
    lambda head, size, fill: (head + fill * size)[: max(size, 1025)],
    st.sampled_from([b"", b"say ", b"seek ", b"tell x ", b"\xff\xfb", b"\x00"]),
    st.one_of(st.sampled_from([1025, 4096, 4097, 70_000]), st.integers(1025, 70_000)),
    st.sampled_from([b"x", b"\xff", b"\x00", b"\xe2\x82", b"ab "]),
)


LINE_ENDS = (b"\r\n", b"\r\x00", b"\n")
"""The line ends telnet clients send (docs/ics.md); each drawn line carries one."""


def malformed(line: bytes) -> bool:
    """Whether every line the server will read from ``line`` is one it must refuse or answer
    without acting: random bytes can spell a well-formed command (``q`` is ``quit``, ``e4`` a
    move, ``resign 1`` resigns game 1), which may rightly change a game; such draws are left
    out. (The server's reading: :class:`TelnetLines`, tested on its own in test_ics_telnet.py,
    then ``$``/``@``.)"""
    for read in TelnetLines(MAX_LINE).feed(line):
        text = (read or "").strip().lstrip("$@").strip()
        if not text or "\x00" in text:
            continue
        if looks_like_move(text.split()[0]) and " " not in text:
            return False
        command = split_command(text)
        if isinstance(command, str):
            continue
        if not command.args:
            return False
        if command.name == "resign" and re.fullmatch(r"\d+|guest-\w*", command.args.lower()):
            return False
    return True


lines = st.builds(
    bytes.__add__,
    st.one_of(st.binary(max_size=300), telnet, nuls, long_lines, command_lines, command_lines),
    st.sampled_from(LINE_ENDS),
).filter(malformed)

# ------------------------------------------------------------------------------ the world


async def new_game(app: App, white: IcsClient, black: IcsClient, observer: IcsClient) -> str:
    await start_spartan(white, black, minutes=60)
    await observer.send(f"observe {white.name}")
    await observer.expect(r"^You are now observing game \d+\.$")
    return game_of(app, white.name)


async def sentinel(client: IcsClient, count: int, batch: list[bytes]) -> None:
    await client.send(f"help sentinel-{count}")
    try:
        await client.expect(rf'^No help on "sentinel-{count}"\.', timeout=30)
    except AssertionError as error:
        shown = [line[:200] for line in batch]
        raise AssertionError(f"{error}\nbatch: {shown}") from None


async def board_after(client: IcsClient, plies: int) -> None:
    """Wait for the board after ``plies`` half-moves."""
    while True:
        fields = board_fields(await client.board(), 8)
        if (int(fields["move_number"]) - 1) * 2 + (fields["turn"] == "B") == plies:
            return


# ------------------------------------------------------------------------------ the test


async def test_fuzzed_ics_lines_change_no_game(
    start_app: StartApp, backend: str, long_sweep: bool, caplog: pytest.LogCaptureFixture
) -> None:
    count = LONG_LINES if long_sweep else CI_LINES[backend]
    drawn = [line for batch in draw_examples(st.lists(lines, min_size=BATCH, max_size=BATCH),
                                             count // BATCH) for line in batch]  # fmt: skip
    assert len(drawn) == count
    app = await start_app(backend, ics=True, **FAST)
    clients = [await IcsClient.guest(app) for _ in range(3)]
    white, black, observer = clients
    rng = random.Random(count)
    game_id = await new_game(app, white, black, observer)
    games, moves, long_seen = 1, 0, 0
    try:
        for start in range(0, count, BATCH):
            batch = drawn[start : start + BATCH]
            anonymous = await IcsClient.open(app.ics_port)
            senders = [*clients, anonymous]
            before = game_state(app, game_id)
            for line in batch:
                sender = rng.choice(senders)
                long_seen += len(line) > 1024
                if sender.closed or sender.writer.is_closing():
                    sender = observer
                sender.writer.write(line)  # its line end drawn with it
                await sender.writer.drain()
            await anonymous.close()
            for client in clients:
                await sentinel(client, start, batch)
            await wait_until(lambda: app.driver.pending_writes == 0)
            assert game_state(app, game_id) == before, [line[:200] for line in batch]
            # The game goes on: the side to move plays; both players see the board.
            room = app.hub.room(game_id)
            assert room is not None
            move = rng.choice(room.game.legal_moves())
            played = room.game.ply + 1
            await (white if room.game.ply % 2 == 0 else black).send(move)
            for client in (white, black):
                await board_after(client, played)
            moves += 1
            room = app.hub.room(game_id)
            if (
                room is None
                or room.finished
                or room.game.ply >= MAX_PLIES
                or not room.game.legal_moves()
            ):
                if room is not None and not room.finished:
                    await white.send("resign")
                await white.expect(r"^\{Game \d+ .*\} (1-0|0-1|1/2-1/2)$")
                await wait_until(lambda: app.driver.pending_writes == 0)
                game_id = await new_game(app, white, black, observer)
                games += 1
    finally:
        for client in clients:
            await client.close()
    print(
        f"\nics fuzz {backend}: {count} lines ({long_seen} over 1 kB), {games} games, {moves} moves"
    )
    assert long_seen > count // 20
    # The server still answers a new connection.
    late = await IcsClient.guest(app)
    await sentinel(late, -1, [])
    await late.close()
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, caplog.text[-3000:]

"""How the ICS port reads a telnet client's bytes (server/transport/ics/telnet.py): line ends
CR LF, CR NUL and LF; negotiation dropped; the 1,024-character limit on every line,
however the bytes were cut into reads (since fa66b3d)."""

from __future__ import annotations

import doctest

import pytest
from ics_support import OpenIcs
from ws_support import StartApp

from server.transport.ics import telnet
from server.transport.ics.server import MAX_LINE, READ_CHUNK
from server.transport.ics.telnet import TelnetLines

LIMIT = 1024


def test_docstring_examples() -> None:
    assert doctest.testmod(telnet).failed == 0


def read(data: bytes, cuts: list[int], max_line: int = LIMIT) -> list[str | None]:
    """The lines ``data`` gives when it arrives cut at ``cuts``."""
    lines = TelnetLines(max_line)
    out: list[str | None] = []
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        out += lines.feed(data[start:end])
    return out


STREAM = (
    b"date\r\x00who\r\nfinger\n"  # the three line ends
    b"\xff\xfd\x01ti\x00me\r\n"  # negotiation before a line, a NUL inside it (kept)
    b"tell x \xff\xffy\r\n"  # IAC IAC is a data byte (not UTF-8: U+FFFD)
    b"say \xe2\x82\xac\r\x00"  # a character of three bytes
)
EXPECTED = ["date", "who", "finger", "ti\x00me", "tell x \ufffdy", "say \u20ac"]


@pytest.mark.parametrize("cut", range(len(STREAM) + 1))
def test_every_cut_into_two_reads_gives_the_same_lines(cut: int) -> None:
    assert read(STREAM, [cut]) == EXPECTED


def test_every_byte_in_a_read_of_its_own_gives_the_same_lines() -> None:
    assert read(STREAM, list(range(1, len(STREAM)))) == EXPECTED


@pytest.mark.parametrize("length", [LIMIT - 1, LIMIT, LIMIT + 1, 2000, 4095, 4096, 4097, 70_000])
@pytest.mark.parametrize("chunk", [1, 7, 1024, 1025, 4096, 1_000_000])
def test_the_limit_holds_at_every_read_size(length: int, chunk: int) -> None:
    """A line of ``length`` characters, then a short one, arriving ``chunk`` bytes a read:
    refused exactly when it is over the limit, and the next line read as it is."""
    data = b"x" * length + b"\r\n" + b"date\r\n"
    lines = read(data, list(range(chunk, len(data), chunk)))
    assert lines == [None if length > LIMIT else "x" * length, "date"]


def test_the_limit_counts_characters_not_bytes() -> None:
    euros = "\u20ac" * LIMIT  # 3,072 bytes
    assert read(euros.encode() + b"\n", []) == [euros]
    assert read(("\u20ac" * (LIMIT + 1)).encode() + b"\n", []) == [None]


def test_an_unfinished_line_is_dropped_once_it_cannot_be_short() -> None:
    lines = TelnetLines(LIMIT)
    assert lines.feed(b"y" * 4 * LIMIT) == []  # could still be 1,024 characters of 4 bytes
    assert lines.feed(b"y") == [None]
    assert lines.feed(b"y" * 100_000) == []  # the rest of it is dropped, not kept
    assert lines.feed(b"\r\ndate\n") == ["date"]


def test_the_server_reads_with_these_limits() -> None:
    assert MAX_LINE == LIMIT and READ_CHUNK == 4096


async def test_a_telnet_client_is_answered_at_every_line_end(
    start_app: StartApp, ics_guest: OpenIcs
) -> None:
    """Over the ICS port: ``help x\\r\\0`` is answered and does not spoil the next line; a
    1,025-character line sent in one write is refused; a 1,024-character one is not."""
    app = await start_app(ics=True)
    client = await ics_guest(app)
    client.writer.write(b"help one\r\x00help two\r\nhelp three\n")
    for word in ("one", "two", "three"):
        await client.expect(rf'^No help on "{word}"\.')
    client.writer.write(b"help " + b"z" * (LIMIT - 5) + b"\r\n")
    await client.expect(r'^No help on "z+(\.\.\.)?"\.')
    client.writer.write(b"help " + b"z" * (LIMIT - 4) + b"\r\nhelp four\r\n")
    await client.expect(r"^Line too long \(more than 1024 characters\); ignored\.")
    await client.expect(r'^No help on "four"\.')

"""A telnet client's bytes as command lines (sans-I/O: bytes in, lines out).

What telnet clients send, and how each is read (RFC 854's network virtual terminal):

* **Line ends**: CR LF (telnet's own), CR NUL (a bare carriage return, as telnet encodes one:
  PuTTY and BSD telnet send it for Return in some modes) and LF alone (netcat, most ICS clients).
  A CR followed by anything else is dropped, as before.
* **NUL** anywhere else stays in the line's text (the session refuses such a line with a
  sentence of its own), and spoils no other line.
* **Negotiation** (IAC sequences: ``IAC WILL/WONT/DO/DONT x``, the two-byte commands) is
  dropped, also when a sequence is split between two reads; ``IAC IAC`` is a data byte 255 (never
  valid UTF-8, so it reads as U+FFFD).
* **Length**: a line longer than ``max_line`` characters is refused as a whole (one ``None``
  instead of its text), whether it arrived in one read or in many: the check is made on every
  complete line, and on the unfinished tail once it cannot be short enough any more (more than
  four bytes a character), so memory stays bounded.
"""

from __future__ import annotations

import re

__all__ = ["TelnetLines"]

_IAC = 0xFF
_NEGOTIATION = re.compile(rb"\xff[\xfb-\xfe].|\xff[\xf0-\xfa]|\xff\xff", re.DOTALL)
_LINE_END = re.compile(rb"\r?\n|\r\x00")
_BYTES_PER_CHAR = 4
"""The most bytes of UTF-8 one character takes."""


class TelnetLines:
    """Feed it the bytes read; it returns the complete lines they finish.

    >>> lines = TelnetLines(max_line=11)
    >>> lines.feed(b"date\\r\\0who\\r")
    ['date']
    >>> lines.feed(b"\\nfinger x\\x00yz\\n" + b"a" * 12 + b"\\n")
    ['who', 'finger x\\x00yz', None]
    """

    __slots__ = ("_buffer", "_discarding", "_max_line", "_pending")

    def __init__(self, max_line: int) -> None:
        self._max_line = max_line
        self._buffer = bytearray()
        """Bytes read, negotiation removed, not yet a complete line."""
        self._pending = b""
        """The start of an IAC sequence a read ended in the middle of."""
        self._discarding = False
        """The current line was refused already: its rest is dropped up to its end."""

    def feed(self, data: bytes) -> list[str | None]:
        """The lines ``data`` completes, in order: each line's text (line end and CRs
        removed), or ``None`` for a line that was too long. Each call costs time in proportion
        to ``data``, not to the unfinished line before it (a client that sends a byte at a time
        makes no read rescan what came before)."""
        data = self._pending + data
        self._pending = b""
        cut = _incomplete_negotiation(data)
        if cut < len(data):
            data, self._pending = data[:cut], data[cut:]
        buffer = self._buffer
        position = max(0, len(buffer) - 1)  # a CR at the end may start a line end
        buffer += _NEGOTIATION.sub(_negotiated, data)
        lines: list[str | None] = []
        start = 0
        while (end := _LINE_END.search(buffer, position)) is not None:
            raw = bytes(buffer[start : end.start()])
            start = position = end.end()
            if self._discarding:
                self._discarding = False
                continue
            text = raw.replace(b"\r", b"").decode("utf-8", "replace")
            lines.append(None if len(text) > self._max_line else text)
        del buffer[:start]
        if len(buffer) > self._max_line * _BYTES_PER_CHAR:
            if not self._discarding:
                lines.append(None)
            self._discarding = True
            buffer[:] = b"\r" if buffer.endswith(b"\r") else b""
        return lines


def _negotiated(match: re.Match[bytes]) -> bytes:
    """What an IAC sequence leaves in the data: a byte 255 for ``IAC IAC``, else nothing."""
    return b"\xff" if match.group() == b"\xff\xff" else b""


def _incomplete_negotiation(data: bytes) -> int:
    """Where an IAC sequence that ``data`` ends in the middle of starts (``len(data)`` if
    none): a trailing ``IAC``, or ``IAC`` + a WILL/WONT/DO/DONT without its option byte. A
    trailing ``IAC IAC`` is complete (a data byte)."""
    n = len(data)
    if n >= 1 and data[-1] == _IAC and not _escaped_iac(data, n - 1):
        return n - 1
    if n >= 2 and data[-2] == _IAC and 0xFB <= data[-1] <= 0xFE and not _escaped_iac(data, n - 2):
        return n - 2
    return n


def _escaped_iac(data: bytes, at: int) -> bool:
    """Whether the IAC at ``at`` is the second byte of an ``IAC IAC`` pair."""
    run = 0
    while at - run - 1 >= 0 and data[at - run - 1] == _IAC:
        run += 1
    return run % 2 == 1

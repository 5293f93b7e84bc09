"""JSON in and out of websocket frames.

**Decoding** (:func:`decode`) is the first check of untrusted input and is safe for any text:
it refuses, with a :class:`DecodeError` whose ``code`` the transport sends back,

* text that is not JSON, or uses the non-standard ``NaN`` / ``Infinity`` (``bad_json``);
* JSON nested deeper than :data:`MAX_DEPTH` levels (``bad_request``);
* numbers written with more than :data:`MAX_NUMBER_LENGTH` characters, integers outside
  the signed 64-bit range, or numbers too large for a float (``bad_request``);
* strings (values or keys) that are not valid Unicode text — a lone UTF-16 surrogate written as
  ``\\ud800`` — or that hold NUL (``bad_request``, naming where): such text could not be
  encoded again, nor stored, so it never reaches the hub.

The checks are cheap on ordinary frames: two substring counts for the depth, one search for
an escape of NUL or a surrogate before looking at strings at all; the standard library's C
decoder does the rest. (It is
also used when orjson is installed: one decoder, one behaviour; see docs/benchmarks.md, "Frame
parsing", for what that costs.)

**Encoding**: outgoing messages are encoded once to UTF-8 bytes (orjson when installed); the
same bytes go to every recipient of a broadcast (as text frames) and to the bus.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, NoReturn

from server.hub.commands import ack_of
from server.hub.errors import ErrorCode
from server.hub.fields import valid_text
from server.hub.messages import AckId, Message

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "JSON_LIBRARY",
    "MAX_DEPTH",
    "MAX_NUMBER_LENGTH",
    "DecodeError",
    "ack_of_text",
    "decode",
    "encode",
    "encode_message",
]

MAX_DEPTH = 16
"""Deepest nesting of arrays and objects accepted (a valid frame needs 3)."""
MAX_NUMBER_LENGTH = 32
"""Longest number accepted, in characters (a valid frame needs 16 digits at most)."""
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
"""Integers accepted: a signed 64-bit range, so that whatever is decoded can be encoded again
(orjson refuses larger integers) and stored (PostgreSQL's ``bigint``)."""


class DecodeError(ValueError):
    """A frame refused by :func:`decode`; ``code`` is ``bad_json`` or ``bad_request``; ``ack``
    the frame's valid ack id when the frame was JSON (a string holding NUL or a lone surrogate),
    so that the client's request is answered rather than left waiting."""

    def __init__(self, code: ErrorCode, message: str, ack: AckId | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.ack = ack


class _Refused(Exception):
    """Raised by the decoder hooks; becomes a ``bad_request`` :class:`DecodeError`."""


def _parse_int(text: str) -> int:
    if len(text) > MAX_NUMBER_LENGTH:
        raise _Refused(f"a number has more than {MAX_NUMBER_LENGTH} characters")
    value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        raise _Refused(f"the integer {text} is out of range")
    return value


def _parse_float(text: str) -> float:
    if len(text) > MAX_NUMBER_LENGTH:
        raise _Refused(f"a number has more than {MAX_NUMBER_LENGTH} characters")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"the number {text} is too large")
    return value


def _parse_constant(name: str) -> NoReturn:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


_decoder = json.JSONDecoder(
    parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
)


# Brackets only, "{" and "}" written as "[" and "]" (mismatched pairs are not JSON anyway).
_BRACKETS_TABLE = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN_RUN = b"[" * (MAX_DEPTH + 1)
_BAD_ESCAPE = re.compile(r"\\u(?:[dD][89a-fA-F]|0000)")


def _too_deep(text: str) -> bool:
    """Whether ``text`` nests arrays or objects deeper than :data:`MAX_DEPTH` (or leaves more
    than that many unclosed, which is not JSON either)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False  # cannot nest deeper than it has brackets: the usual, cheap case
    # Brackets inside strings do not nest. Without its escaped backslashes and quotes, the
    # text alternates outside / inside strings at each quote; keep the brackets outside. Then
    # peel the innermost pairs, one level per round: a balanced skeleton of depth <= MAX_DEPTH
    # is gone after MAX_DEPTH rounds, and a run of MAX_DEPTH + 1 opening brackets (only
    # balanced pairs were removed from between them) is too deep at once. Everything runs in
    # C loops: well under a millisecond for the worst 64 KiB frame (docs/benchmarks.md,
    # "Frame parsing").
    outside = "".join(text.replace("\\\\", "").replace('\\"', "").split('"')[::2])
    skeleton = outside.encode("utf-8", "surrogatepass").translate(_BRACKETS_TABLE, _NOT_BRACKETS)
    for _ in range(MAX_DEPTH):
        if not skeleton:
            return False
        if _OPEN_RUN in skeleton:
            return True
        skeleton = skeleton.replace(b"[]", b"")
    return bool(skeleton)


def _bad_text_at(obj: Any, path: str) -> str | None:
    """The path of the first string (value or key) in ``obj`` that is not valid text."""
    if isinstance(obj, str):
        return None if valid_text(obj) else path
    if isinstance(obj, dict):
        for key, value in obj.items():
            where = (
                f"{path}.{key}" if valid_text(key) and key.isidentifier() else f"{path}[{key!r}]"
            )
            if not valid_text(key):
                return where
            found = _bad_text_at(value, where)
            if found is not None:
                return found
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            found = _bad_text_at(value, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def decode(text: str | bytes) -> Any:
    """Parse one JSON document from an untrusted peer (see the module docstring).

    >>> decode('{"t": "sought"}')
    {'t': 'sought'}

    :raises DecodeError: the text is refused; ``code`` and ``message`` say why.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(ErrorCode.BAD_JSON, f"The frame is not valid UTF-8: {exc}") from None
    if _too_deep(text):
        raise DecodeError(
            ErrorCode.BAD_REQUEST,
            f"The frame nests arrays or objects deeper than {MAX_DEPTH} levels.",
        )
    try:
        obj = _decoder.decode(text)
    except _Refused as exc:
        raise DecodeError(ErrorCode.BAD_REQUEST, f"The frame is refused: {exc}.") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise DecodeError(ErrorCode.BAD_JSON, f"The frame is not valid JSON: {exc}") from None
    # Escapes are the only way to write NUL or a lone surrogate in JSON text that arrived as
    # valid UTF-8: without one (\u0000, \ud800-\udfff) there is nothing to look for.
    if "\\u" in text and _BAD_ESCAPE.search(text):
        where = _bad_text_at(obj, "frame")
        if where is not None:
            raise DecodeError(
                ErrorCode.BAD_REQUEST,
                f"The frame is refused: {where} is not valid Unicode text (a lone surrogate) "
                "or holds NUL.",
                ack_of(obj),
            )
    return obj


_dumps: Callable[[Any], bytes]

try:  # pragma: no cover - which branch runs depends on the environment
    import orjson

    def _orjson_dumps(obj: Any) -> bytes:
        return orjson.dumps(obj)

    _dumps = _orjson_dumps
    JSON_LIBRARY = "orjson"
except ImportError:  # pragma: no cover
    _encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    def _json_dumps(obj: Any) -> bytes:
        return _encoder.encode(obj).encode()

    _dumps = _json_dumps
    JSON_LIBRARY = "json"


def encode(obj: Any) -> bytes:
    """Compact UTF-8 JSON of ``obj``.

    >>> encode({"t": "ack", "d": {}})
    b'{"t":"ack","d":{}}'
    """
    return _dumps(obj)


def encode_message(message: Message) -> bytes:
    """The wire form of a server message (see :meth:`Message.to_json_obj`)."""
    return _dumps(message.to_json_obj())


def ack_of_text(data: str | bytes) -> AckId | None:
    """The ack id of a small text frame, to address its rejection (best effort: ``None`` for
    a binary frame, one over 1024 characters, or one that does not decode)."""
    if not isinstance(data, str) or len(data) > 1024:
        return None
    try:
        return ack_of(decode(data))
    except DecodeError:
        return None

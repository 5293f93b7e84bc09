"""JSON in and out of websocket frames: orjson when installed, else the standard library.

Outgoing messages are encoded once to UTF-8 bytes; the same bytes go to every recipient of a
broadcast (as text frames) and to the bus.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from server.hub.messages import Message

__all__ = ["JSON_LIBRARY", "DecodeError", "decode", "encode", "encode_message"]

DecodeError: tuple[type[Exception], ...]
_loads: Callable[[str | bytes], Any]
_dumps: Callable[[Any], bytes]

try:  # pragma: no cover - which branch runs depends on the environment
    import orjson

    def _orjson_dumps(obj: Any) -> bytes:
        return orjson.dumps(obj)

    _loads = orjson.loads
    _dumps = _orjson_dumps
    DecodeError = (orjson.JSONDecodeError, UnicodeDecodeError)
    JSON_LIBRARY = "orjson"
except ImportError:  # pragma: no cover
    _encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    def _json_dumps(obj: Any) -> bytes:
        return _encoder.encode(obj).encode()

    def _json_loads(data: str | bytes) -> Any:
        return json.loads(data)

    _loads = _json_loads
    _dumps = _json_dumps
    DecodeError = (json.JSONDecodeError, UnicodeDecodeError)
    JSON_LIBRARY = "json"


def decode(text: str | bytes) -> Any:
    """Parse one JSON document.

    >>> decode('{"t": "sought"}')
    {'t': 'sought'}

    :raises ValueError: (one of :data:`DecodeError`) if ``text`` is not valid JSON.
    """
    return _loads(text)


def encode(obj: Any) -> bytes:
    """Compact UTF-8 JSON of ``obj``.

    >>> encode({"t": "ack", "d": {}})
    b'{"t":"ack","d":{}}'
    """
    return _dumps(obj)


def encode_message(message: Message) -> bytes:
    """The wire form of a server message (see :meth:`Message.to_json_obj`)."""
    return _dumps(message.to_json_obj())

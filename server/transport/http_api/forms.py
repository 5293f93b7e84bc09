"""Request bodies: ``application/x-www-form-urlencoded`` (what lichess's API and berserk send)
or a JSON object of scalars. Unknown fields are ignored, as lichess does; a field given twice,
a body that is neither, or one over the size limit (413, aiohttp's) is refused.

Every JSON body of the HTTP API is parsed by :func:`json_body`: the websocket's decoder
(:func:`server.transport.codec.decode`), with its bounds on depth, numbers and text, so a
deeply nested body is a 400 like any other bad JSON, never a ``RecursionError``. The body
itself has been read whole, within ``body_timeout_s``, before any handler runs
(:func:`server.transport.http_api.app.whole_bodies`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from server.jsontypes import JsonObject
from server.transport.codec import DecodeError, decode
from server.transport.http_api.context import api_error

__all__ = ["flag", "json_body", "parse_json_object", "read_form", "whole_number"]


def parse_json_object(raw: bytes) -> JsonObject:
    """``raw`` as a JSON object, or a 400 saying why not."""
    try:
        value: Any = decode(raw)
    except DecodeError as exc:
        api_error(400, exc.message.replace("The frame", "The body", 1))
    if not isinstance(value, dict):
        api_error(400, "The JSON body must be an object.")
    return value


async def json_body(request: web.Request) -> JsonObject:
    """The request's body as a JSON object (:func:`parse_json_object`)."""
    return parse_json_object(await request.read())


async def read_form(request: web.Request) -> dict[str, str]:
    """The body's fields as text (JSON numbers and booleans as their JSON text)."""
    if not request.body_exists:
        return {}
    raw = await request.read()  # bounded by the application's client_max_size
    if not raw:
        return {}
    kind = request.content_type
    fields: dict[str, str] = {}
    if kind == "application/json":
        for name, item in parse_json_object(raw).items():
            if isinstance(item, bool):
                fields[name] = "true" if item else "false"
            elif isinstance(item, str | int | float):
                fields[name] = str(item)
            elif item is not None:
                api_error(400, f"{name}: must be a string, number or boolean")
        return fields
    try:
        text = raw.decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False, errors="strict")
    except (UnicodeDecodeError, ValueError):
        api_error(400, "The body is not valid form data (UTF-8, percent-encoded).")
    for name, item in pairs:
        if name in fields:
            api_error(400, f"{name}: given more than once")
        if "\x00" in item:
            api_error(400, f"{name}: must not contain NUL")
        fields[name] = item
    return fields


def flag(fields: dict[str, str], name: str, default: bool = False) -> bool:
    """A boolean field: ``true``/``false`` (any case), or absent."""
    value = fields.get(name)
    if value is None or value == "":
        return default
    lowered = value.lower()
    if lowered not in ("true", "false"):
        api_error(400, f"{name}: must be true or false")
    return lowered == "true"


def whole_number(raw: str, max_digits: int) -> int | None:
    """``raw`` as a whole number of at most ``max_digits`` ASCII digits, or None.

    ``str.isdigit`` alone is not enough: it accepts digits ``int`` refuses (``²``) and other
    scripts' digits (``٣``), which no client means as a number here.

    >>> whole_number("042", 3), whole_number("²", 3), whole_number("٣", 3), whole_number("1234", 3)
    (42, None, None, None)
    """
    if not raw.isascii() or not raw.isdigit() or len(raw) > max_digits:
        return None
    return int(raw)

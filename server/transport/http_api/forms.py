"""Request bodies: ``application/x-www-form-urlencoded`` (what lichess's API and berserk send)
or a JSON object of scalars. Unknown fields are ignored, as lichess does; a field given twice,
a body that is neither, or one over the size limit (413, aiohttp's) is refused."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

from aiohttp import web

from server.transport.http_api.context import api_error

__all__ = ["flag", "read_form", "whole_number"]


async def read_form(request: web.Request) -> dict[str, str]:
    """The body's fields as text (JSON numbers and booleans as their JSON text)."""
    if not request.can_read_body:
        return {}
    raw = await request.read()  # bounded by the application's client_max_size
    if not raw:
        return {}
    kind = request.content_type
    fields: dict[str, str] = {}
    if kind == "application/json":
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            api_error(400, "The body is not valid JSON.")
        if not isinstance(value, dict):
            api_error(400, "The JSON body must be an object.")
        for name, item in value.items():
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

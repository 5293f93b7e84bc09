"""E-mail addresses: the one rule an address must follow, and how a log line shows one.

The rule is the HTML standard's "valid e-mail address" (what a browser's ``<input
type="email">`` accepts) with a dot in the domain (the web form's ``pattern`` asks for one too,
so the form and the server agree): ASCII, a local part of letters, digits and
``.!#$%&'*+/=?^_`{|}~-``, an ``@``, and a domain of at least two labels of letters, digits and
inner hyphens. Besides it, at most :data:`MAX_EMAIL` characters (RFC 5321's
path limit) and a local part of at most 64. Quoted local parts, comments and IP literals are
refused: nobody needs them to receive a "your turn" mail.

>>> email_problem("alice@example.org") is None
True
>>> email_problem("alice@localhost")
'must be an e-mail address such as name@example.org'
>>> masked("alice@example.org")
'a***@example.org'
"""

from __future__ import annotations

import re

__all__ = ["MAX_EMAIL", "email_problem", "masked"]

MAX_EMAIL = 254
"""The longest address (RFC 5321: a 256-octet path less its angle brackets)."""

MAX_LOCAL = 64

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL = re.compile(rf"[A-Za-z0-9.!#$%&'*+/=?^_`{{|}}~-]+@{_LABEL}(?:\.{_LABEL})+")


def email_problem(address: str) -> str | None:
    """``None`` for an address that follows the rule, else what is wrong (for an error)."""
    if len(address) > MAX_EMAIL:
        return f"must have at most {MAX_EMAIL} characters"
    if not _EMAIL.fullmatch(address) or len(address.partition("@")[0]) > MAX_LOCAL:
        return "must be an e-mail address such as name@example.org"
    return None


def masked(address: str) -> str:
    """An address as a log line may show it: the first character of the local part, then
    ``***``, then the domain (enough to tell a provider's outage, never the whole address)."""
    local, _, domain = address.partition("@")
    return f"{local[:1]}***@{domain}"

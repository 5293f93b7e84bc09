"""The headers every HTTP answer of the public port carries, from either of its two HTTP servers
(websockets' pages, :mod:`server.transport.http`; aiohttp's API, :mod:`server.transport.http_api`).

* ``Server: variant-hub`` — no library or Python version for a scanner to match against
  advisories (websockets and aiohttp would send ``Python/3.11 websockets/17.0`` and
  ``Python/3.11 aiohttp/3.x``).
* ``Content-Security-Policy`` (:data:`CONTENT_SECURITY_POLICY`): scripts, styles and connections
  from this origin only — the web client is one module script and one style sheet under
  ``/static/``, sets no inline style or script, and talks to its own origin (``'self'`` covers
  the websocket on the same host and port). Nothing may frame a page (``frame-ancestors
  'none'``): the token page asks for a password, which a framing site could overlay. A page
  with inline script or style (the token page) gets the same policy with their hashes
  (:func:`page_policy`) instead of allowing inline code in general.
* ``X-Frame-Options: DENY`` (the same for browsers without CSP level 2),
  ``X-Content-Type-Options: nosniff`` (a JSON answer or a PGN export is never run as script),
  ``Referrer-Policy: no-referrer`` (a link followed from a game does not tell the other site
  which game or player page it came from).
"""

from __future__ import annotations

import base64
import hashlib
import re

__all__ = ["CONTENT_SECURITY_POLICY", "SECURITY_HEADERS", "SERVER_NAME", "page_policy"]

SERVER_NAME = "variant-hub"
"""The ``Server`` header of every answer."""

_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def _policy(directives: dict[str, str]) -> str:
    return "; ".join(f"{name} {value}" for name, value in directives.items())


CONTENT_SECURITY_POLICY = _policy(_POLICY)
"""The policy of every answer but pages with inline code (:func:`page_policy`)."""

SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
)
"""Added to every answer that does not set the header itself (the module docstring says why)."""

_INLINE = {
    "script-src": re.compile(rb"<script>(.*?)</script>", re.DOTALL),
    "style-src": re.compile(rb"<style>(.*?)</style>", re.DOTALL),
}


def page_policy(html: bytes) -> str:
    """:data:`CONTENT_SECURITY_POLICY` for a page whose inline ``<script>`` and ``<style>``
    elements may run: each allowed by its SHA-256 hash, nothing else inline.

    >>> "script-src 'self' 'sha256-" in page_policy(b"<script>go()</script>")
    True
    """
    directives = dict(_POLICY)
    for directive, pattern in _INLINE.items():
        for code in pattern.findall(html):
            digest = base64.b64encode(hashlib.sha256(code).digest()).decode()
            directives[directive] += f" 'sha256-{digest}'"
    return _policy(directives)

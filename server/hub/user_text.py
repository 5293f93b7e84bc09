"""User text: the one definition of what a person may write into the server.

Chat lines, tells, decline reasons, token descriptions, names — any text one person writes that
others are shown — is *one line of visible text*. :func:`check_user_text` is the check every
door applies at its edge (the hub's :class:`~server.hub.commands.FieldReader` for every string
field of a command; the doors whose text does not pass through a hub command — the ICS line
reader and ``tell``, the HTTP API's token descriptions — call it themselves).

Refused (``bad_request``, the message naming the field and the character):

* C0 controls U+0000–U+001F (NUL, TAB, CR, LF, ESC …) and DEL U+007F: a line break would let
  the text end the line the server was writing and start one of its own (an ICS client reads a
  ``{Game 1 …} 1-0`` or ``<12> …`` line as the server's); ESC starts terminal escape sequences
  (clear the screen, set the window title, move the cursor to fake a ``login:`` prompt). TAB is
  refused too: it is a control character, no client needs it in a chat line, and refusing is
  clearer than stripping (the sender learns at once why, lichess silently strips).
* C1 controls U+0080–U+009F (U+009B is a one-character CSI in some terminals, U+0085 a line
  break to Unicode).
* U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR: line breaks to Unicode and to
  JavaScript.
* The bidirectional embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069: an
  override left open reverses the text *after* the user's — the server's own words on that
  line (``alice says: …``), or a name shown next to another — which is the "Trojan Source"
  spoofing. Right-to-left scripts need none of them (the Unicode bidirectional algorithm
  orders Arabic or Hebrew text by itself); the marks U+200E/U+200F, which have no scope, stay
  allowed, as do the joiners emoji use.

Text stored before this check existed is made safe where it is written out: the ICS renderer
passes every line through :func:`neutralised`.
"""

from __future__ import annotations

import re

from server.hub.errors import ProtocolError

__all__ = ["check_user_text", "forbidden_character", "neutralised", "text_problem"]

_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Every character :func:`check_user_text` refuses (the module docstring says why)."""

REPLACEMENT = "\ufffd"
"""What :func:`neutralised` writes in place of a refused character."""


def forbidden_character(value: str) -> int:
    """The index of the first character of ``value`` that user text may not hold, or -1.

    Printable ASCII (every move, game id and most names) is decided by two C calls.

    >>> forbidden_character("hi"), forbidden_character("hi\\r\\n<12>"), forbidden_character("é\\u202e")
    (-1, 2, 1)
    """
    if value.isascii() and value.isprintable():
        return -1
    found = _FORBIDDEN.search(value)
    return -1 if found is None else found.start()


def text_problem(value: str) -> str | None:
    """Why ``value`` is not user text, or ``None`` when it is.

    >>> text_problem("ab\x1b")
    'must not contain control characters (U+001B at position 2)'
    """
    at = forbidden_character(value)
    if at < 0:
        return None
    return f"must not contain control characters (U+{ord(value[at]):04X} at position {at})"


def check_user_text(value: str, field: str, max_length: int) -> str:
    """``value`` if it is 1 to ``max_length`` characters of user text, else
    :class:`~server.hub.errors.ProtocolError` (``bad_request``) with a message naming ``field``.

    >>> check_user_text("good game", "text", 300)
    'good game'
    >>> check_user_text("hi\\x1b[2J", "text", 300)
    Traceback (most recent call last):
    ...
    server.hub.errors.ProtocolError: text: must not contain control characters (U+001B at position 2)
    """
    if not value or len(value) > max_length:
        raise ProtocolError(f"{field}: must have 1 to {max_length} characters")
    problem = text_problem(value)
    if problem is not None:
        raise ProtocolError(f"{field}: {problem}")
    return value


def neutralised(text: str) -> str:
    """``text`` with every character user text may not hold replaced by U+FFFD, so that what a
    renderer writes is one line of visible text whatever was stored.

    >>> neutralised("hi\\r\\n{Game 1}") == "hi\\ufffd\\ufffd{Game 1}"
    True
    """
    if forbidden_character(text) < 0:
        return text
    return _FORBIDDEN.sub(REPLACEMENT, text)

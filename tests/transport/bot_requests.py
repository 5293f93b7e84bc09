"""The vocabulary of bad Bot API requests (strategies: ``bot_fuzz.py``): a request
(:class:`Call`), the endpoints, the cast's names and password, the position of the bot's game and
which moves the adjudicator refuses there, path parts and bodies no endpoint accepts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, urlencode

from hypothesis import strategies as st

from server.hub.game_ids import GAME_ID_LENGTH, GAME_ID_PATTERN
from server.rules import Game, IllegalMoveError, InvalidMoveError, get_variant
from server.transport.http_api.app import MAX_BODY_BYTES

PASSWORD = "correct horse"
CAST = ("robo", "tron", "alice", "computer")
OPENING = ("a1b2",)
"""The bot's game has this move (alice's) when the requests start; the bot is to move."""


def _position() -> Game:
    game = Game(get_variant("minishogi"))
    for move in OPENING:
        game.play(move)
    return game


def refused_move(text: str) -> bool:
    """Whether the adjudicator refuses ``text`` as the bot's move (what the hub asks it)."""
    try:
        _position().play(text)
    except (InvalidMoveError, IllegalMoveError):
        return True
    return False


LEGAL = tuple(_position().legal_moves())
BAD_CREDENTIALS = ("none", "garbage", "vhb_garbage", "revoked", "basic", "empty", "long")


@dataclass(frozen=True)
class Live:
    """A value of the running test, filled in when the request is sent."""

    name: str  # "game", "answered" (a challenge id), "robo_token", "tron_token" (token ids)


Part = str | Live


@dataclass(frozen=True)
class Call:
    """One request that must be refused (or, for a public read, answered) and change nothing.

    ``path`` is percent-encoded text and :class:`Live` parts; ``expect`` the statuses docs/bots.md
    gives for it (empty: any status below 500, a public read)."""

    kind: str
    method: str
    path: tuple[Part, ...]
    who: str
    body: bytes | None = None
    content_type: str | None = None
    expect: frozenset[int] = frozenset()
    query: str = ""

    def __post_init__(self) -> None:
        # A path no route takes is answered before any handler: by aiohttp's router, a 404 (a
        # 405 where another route of another method takes the path).
        if self.expect and any(isinstance(p, str) and misses_route(p) for p in self.path[1::2]):
            object.__setattr__(
                self, "expect", codes(404) if self.method == "GET" else codes(404, 405)
            )


def codes(*codes: int) -> frozenset[int]:
    return frozenset(codes)


# --- values ---------------------------------------------------------------------------------


def segment(text: str) -> str:
    """``text`` as one path part (a lone surrogate as the bytes UTF-8 would give it)."""
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def misses_route(part: str) -> bool:
    """Whether a path part (percent-encoded) matches no route's ``{name}``: aiohttp's takes no
    ``{`` or ``}``, even percent-encoded, and no empty part (an encoded ``/`` stays in it)."""
    return not part or any(c in unquote(part, errors="replace") for c in "{}")


def not_a_number_of(max_digits: int) -> st.SearchStrategy[str]:
    """Text a field of whole seconds (or a level) refuses: not ASCII digits, or too long.
    Unicode digits (``²``, ``٣``) are in: ``str.isdigit`` accepts them."""
    return st.one_of(
        st.text(min_size=1, max_size=8).filter(lambda s: not (s.isascii() and s.isdigit())),
        st.sampled_from(["-1", "1.5", "1e3", " 5", "5 ", "+5", "²", "٣", "0x10", "true"]),
        st.text(alphabet="0123456789", min_size=max_digits + 1, max_size=max_digits + 30),
    )


def _not_a_name(text: str) -> bool:
    return text not in ("", ".", "..", "ai") and text.lower() not in CAST


junk_name = st.one_of(
    st.text(max_size=40).filter(_not_a_name).map(segment),
    st.sampled_from(["nobody_here", "0", "-1", "%00", "%FF", "x" * 200]),
)
junk_game = st.one_of(
    st.text(max_size=40)
    .filter(lambda s: s not in ("", ".", "..") and not GAME_ID_PATTERN.fullmatch(s))
    .map(segment),
    # Well-formed ids the hub never makes (it makes GAME_ID_LENGTH characters).
    st.text(alphabet="abcXYZ019_-", min_size=GAME_ID_LENGTH + 1, max_size=16),
    st.sampled_from(["%00", "%FF", "-1", "9" * 40]),
)
junk_id = st.one_of(
    st.text(max_size=20).filter(lambda s: s not in ("", ".", "..")).map(segment),
    st.sampled_from(
        ["0", "-1", "00", "%C2%B2", "%D9%A3", "9" * 13, "9" * 17, "99999999999", "1e3"]
    ),
)
"""A challenge or token id the caller cannot act on: mostly not a number; a number is no open
challenge (none is open while the requests run) and no token of alice's (she has none)."""
wrong_password = st.text(max_size=30).filter(lambda s: s != PASSWORD)

# --- bodies -------------------------------------------------------------------------------------

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"
Body = tuple[bytes | None, str | None]


def form(fields: dict[str, str]) -> Body:
    return urlencode(fields).encode(), FORM


def json_object(fields: dict[str, Any]) -> Body:
    return json.dumps(fields).encode(), JSON


broken_body: st.SearchStrategy[Body] = st.one_of(
    st.just((b"x" * (MAX_BODY_BYTES + 10), FORM)),
    st.just((b'{"text": ' * 200, JSON)),
    st.just((b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", JSON)),  # RecursionError once
    st.sampled_from([b"[1, 2]", b'"text"', b"null", b"{", b"\xff\xfe", b'{"text": [1]}']).map(
        lambda raw: (raw, JSON)
    ),
    st.sampled_from([b"text=a&text=b", b"\xff=\xfe", b"room=%FF%FE", b"text=a%00b"]).map(
        lambda raw: (raw, FORM)
    ),
)
"""A body no endpoint reads: over the size limit, not JSON, a JSON non-object or nested value
(100,000 levels deep too), not UTF-8, a field given twice, NUL."""
any_body: st.SearchStrategy[Body] = st.one_of(  # valid or not: for callers refused anyway
    st.just((None, None)),
    broken_body,
    st.binary(max_size=200).map(lambda raw: (raw, None)),
    st.dictionaries(
        st.sampled_from(["room", "text", "reason", "clock.limit", "color", "variant", "x"]),
        st.text(max_size=40),
        max_size=5,
    ).flatmap(lambda fields: st.sampled_from([form(fields), json_object(fields)])),
)

# --- the endpoints ------------------------------------------------------------------------------

ENDPOINTS: dict[str, tuple[str, str]] = {
    "account": ("GET", "/api/account"),
    "playing": ("GET", "/api/account/playing"),
    "upgrade": ("POST", "/api/bot/account/upgrade"),
    "user": ("GET", "/api/user/{name}"),
    "event_stream": ("GET", "/api/stream/event"),
    "online": ("GET", "/api/bot/online"),
    "game_stream": ("GET", "/api/bot/game/stream/{game}"),
    "move": ("POST", "/api/bot/game/{game}/move/{move}"),
    "chat": ("POST", "/api/bot/game/{game}/chat"),
    "abort": ("POST", "/api/bot/game/{game}/abort"),
    "resign": ("POST", "/api/bot/game/{game}/resign"),
    "draw": ("POST", "/api/bot/game/{game}/draw/{answer}"),
    "takeback": ("POST", "/api/bot/game/{game}/takeback/{answer}"),
    "challenge": ("POST", "/api/challenge/{name}"),
    "challenge_ai": ("POST", "/api/challenge/ai"),
    "accept": ("POST", "/api/challenge/{id}/accept"),
    "decline": ("POST", "/api/challenge/{id}/decline"),
    "cancel": ("POST", "/api/challenge/{id}/cancel"),
    "token_create": ("POST", "/api/token"),
    "token_list": ("GET", "/api/token"),
    "token_list_form": ("POST", "/api/token/list"),
    "token_revoke": ("DELETE", "/api/token/{id}"),
    "token_revoke_form": ("POST", "/api/token/{id}/revoke"),
    "token_revoke_own": ("DELETE", "/api/token"),
    "token_page": ("GET", "/api/token/page"),
    "export": ("GET", "/game/export/{game}"),
}
PUBLIC = frozenset({"user", "online", "token_page", "export"})
"""Endpoints that need no token (reads): any credentials, the answer may be 200."""
GAME_ACTIONS = ("move", "chat", "abort", "resign", "draw", "takeback")


def path_of(template: str, **parts: Part) -> tuple[Part, ...]:
    """``template`` with its ``{name}`` parts replaced (path text, or a :class:`Live`)."""
    out: list[Part] = []
    for piece in template.split("/")[1:]:
        out.append("/")
        if piece.startswith("{"):
            out.append(parts[piece[1:-1]])
        else:
            out.append(piece)
    return tuple(out)


# --- moves ---------------------------------------------------------------------------------------

SQUARES = [f"{file}{rank}" for file in "abcde" for rank in "12345"]
well_formed_move = st.one_of(
    st.tuples(st.sampled_from(SQUARES), st.sampled_from(SQUARES), st.sampled_from(["", "+"])).map(
        "".join
    ),
    st.tuples(st.sampled_from("PSGBRKLN"), st.sampled_from(SQUARES)).map(
        lambda t: f"{t[0]}@{t[1]}"
    ),
    st.sampled_from(["@@@@", "a5a4,a4a3", "a5a4+", "b5a4+", "e5d4+"]),
)
bad_move: st.SearchStrategy[str] = st.one_of(
    well_formed_move,  # illegal here: wrong piece, no piece, blocked, no drop in hand
    st.text(max_size=12),  # malformed
    st.text(min_size=33, max_size=300),  # over MAX_MOVE_LENGTH
    st.text(alphabet="a5a4+@,", min_size=33, max_size=2000),
    st.sampled_from(LEGAL).map(lambda uci: uci + "x" * 40),
    st.sampled_from(LEGAL).map(lambda uci: uci.upper()),
    st.sampled_from(LEGAL).map(lambda uci: "".join(chr(ord(c) + 0xFEE0) for c in uci)),  # fullwidth
    st.text(alphabet=st.characters(min_codepoint=0x80), min_size=1, max_size=12),  # non-ASCII
    st.sampled_from(LEGAL).map(lambda uci: uci[:2] + "\x00" + uci[2:]),
).filter(refused_move)
"""A move the adjudicator refuses after :data:`OPENING` (filtered through it: the one place
that decides, e.g. surrounding blanks are accepted)."""

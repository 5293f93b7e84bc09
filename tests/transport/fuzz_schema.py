"""The frame schema of the fuzz tests (fuzz_frames.py, test_tournaments_bad_input.py): every
client frame type and its fields (type, required or not, a valid or live value, the integer
range), the JSON types each kind of field accepts and the words of the choice fields.

The schema is the test's own reading of docs/protocol.md, not the server's table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_ID = 2**53


@dataclass(frozen=True)
class Raw:
    """JSON text put into a frame as is (what ``json.dumps`` cannot or will not write)."""

    text: str


@dataclass(frozen=True)
class Live:
    """A value of the running game, filled in when the frame is sent (``game``, ``ply``, …)."""

    name: str


@dataclass(frozen=True)
class Field:
    kind: str  # "string", "int", "bool", "choice", "tc", "range", "count" (int or digit string)
    required: bool = True
    valid: Any = None  # a valid value (or a Live)
    low: int = 0
    high: int = 0
    secret: bool = False  # a password or token: any valid Unicode, control characters too


def _game() -> Field:
    return Field("string", valid=Live("game"))


TC = {"kind": "fischer", "base_s": 600, "inc_s": 0}


def _tournament() -> Field:
    return Field("string", valid=Live("tournament"))


TOURNAMENT_SCHEMA: dict[str, dict[str, Field]] = {
    "tournament_create": {
        "name": Field("string", valid="Fuzz cup"),
        "format": Field("choice", valid="arena"),
        "variant": Field("string", valid="wildcastle"),
        "tc": Field("tc", valid=TC),
        "rated": Field("bool", False, False),
        "start_at_ms": Field("int", False, 2_000_000_000_000, 0, MAX_ID),
        "start_when_joined": Field("int", False, 4, 2, 100_000),
        "duration_s": Field("int", False, 600, 1, 7 * 24 * 3600),
        "rounds": Field("int", False, 3, 1, 50),
        "password": Field("string", False, "sesame", secret=True),
        "min_rating": Field("int", False, 1000, 0, 4000),
        "bots": Field("bool", False, True),
        "computer": Field("bool", False, False),
        "max_players": Field("int", False, 8, 2, 100_000),
        "berserk": Field("bool", False, True),
    },
    "tournament_join": {
        "id": _tournament(),
        "password": Field("string", False, "sesame", secret=True),
    },
    "tournament_withdraw": {"id": _tournament()},
    "tournament_pause": {"id": _tournament(), "pause": Field("bool", False, True)},
    "tournament": {"id": _tournament()},
    "tournament_watch": {"id": _tournament()},
    "tournament_unwatch": {"id": _tournament()},
    "tournament_round": {
        "id": _tournament(),
        "round": Field("int", True, 1, 1, 1_000_000),
        "page": Field("int", False, 1, 1, 1_000),
    },
    "tournament_list": {"status": Field("choice", False, "started")},
    "tournament_chat": {"id": _tournament(), "text": Field("string", valid="good luck")},
}
"""The tournament frames (docs/protocol.md, Tournaments): ``Live("tournament")`` is a real
tournament's id where the test has one."""

SCHEMA: dict[str, dict[str, Field]] = {
    "seek": {
        "variant": Field("string", valid="minishogi"),
        "tc": Field("tc", valid=TC),
        "rated": Field("bool", False, False),
        "colour": Field("choice", False, "first"),
        "range": Field("range", False, [0, 4000]),
        "manual": Field("bool", False, True),
    },
    "unseek": {"id": Field("int", False, Live("seek"), 1, MAX_ID)},
    "sought": {"watch": Field("bool", False, True)},
    "who": {},
    "play": {"id": Field("int", True, Live("seek"), 1, MAX_ID)},
    "match": {
        "to": Field("string", valid=Live("observer")),
        "variant": Field("string", valid="minishogi"),
        "tc": Field("tc", valid=TC),
        "rated": Field("bool", False, False),
        "colour": Field("choice", False, "random"),
    },
    "challenge_ai": {
        "variant": Field("string", valid="minishogi"),
        "level": Field("int", True, 1, 1, 8),
        "tc": Field("tc", valid=TC),
        "colour": Field("choice", False, "random"),
    },
    "accept": {"id": Field("int", True, Live("seek"), 1, MAX_ID)},
    "decline": {
        "id": Field("int", True, Live("seek"), 1, MAX_ID),
        "reason": Field("string", False, "later"),
    },
    "withdraw": {"id": Field("int", True, Live("seek"), 1, MAX_ID)},
    "join": {"game": _game(), "v": Field("int", False, Live("v"), 0, MAX_ID)},
    "leave": {"game": _game()},
    "move": {
        "game": _game(),
        "ply": Field("int", True, Live("ply"), 1, 100_000),
        "move": Field("string", valid=Live("move")),
    },
    "resign": {"game": _game()},
    "abort": {"game": _game()},
    "claim_draw": {"game": _game()},
    "abandon_claim": {"game": _game(), "outcome": Field("choice", valid="win")},
    "chat": {"game": _game(), "text": Field("string", valid="good luck")},
    "berserk": {"game": _game()},
    **{
        f"{kind}_{action}": {"game": _game()}
        for kind in ("draw", "takeback", "rematch")
        for action in ("offer", "accept", "decline")
    },
    "register": {
        "name": Field("string", valid="fuzzer"),
        "password": Field("string", valid="correct horse", secret=True),
    },
    "login": {
        "name": Field("string", valid=Live("name")),
        "password": Field("string", valid="correct horse", secret=True),
    },
    "guest": {},
    "resume": {"token": Field("string", valid=Live("token"), secret=True)},
    "logout": {},
    "logout_everywhere": {},
    "change_password": {
        # Never the player's password: a well-formed frame is refused (bad_credentials).
        "old": Field("string", valid="not the password"),
        "new": Field("string", valid="another password"),
    },
    "ping": {},
    **TOURNAMENT_SCHEMA,
    "my_games": {},
    "mail_settings": {
        "email": Field("string", False, "fuzzer@example.org"),
        "opt_in": Field("bool", False, True),
        "forget": Field("bool", False, False),
    },
    "games": {
        "player": Field("string", False, Live("name")),
        "variant": Field("string", False, "minishogi"),
        "result": Field("string", False, "1-0"),
        "status": Field("string", False, "started"),
        "since": Field("string", False, "2024-01-01"),
        "until": Field("string", False, "9999-12-31T00:00:00Z"),
        "limit": Field("count", False, 5),
        "offset": Field("count", False, "0"),
    },
    # ply: the HTTP query's reader (a digit string is a number too), as games' limit and offset
    "review": {"game": _game(), "ply": Field("count", False, 0)},
    "export": {"game": _game(), "format": Field("string", valid="pgn")},
    "analysis": {"game": _game()},
    "analyse": {
        "game": _game(),
        "movetime_ms": Field("int", False, 100, 50, 10_000),
        "depth": Field("int", False, 5, 1, 30),
    },
}
"""Every frame type and its fields: type, required, a valid (live) value, integer range."""

ACCEPTED_TYPES = {
    "string": {"string"},
    "choice": {"string"},
    "int": {"int"},
    "count": {"int", "string"},
    "bool": {"bool"},
    "tc": {"object"},
    "range": {"array"},
}


CHOICES = {
    "colour": ("first", "second", "random"),
    "outcome": ("win", "draw"),
    "format": ("arena", "swiss", "round_robin", "double_round_robin"),
    "status": ("created", "started", "finished"),
}

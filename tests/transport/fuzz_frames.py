"""Hypothesis strategies of bad client input for the fuzz suite (test_transport_fuzz.py).

Every frame drawn here is invalid *by construction*: a valid frame of some type (with live
values — the real game id, the next ply, a legal move — substituted when it is sent) gets one to
three mutations, each of which alone makes it invalid: a field of a wrong JSON type, a missing
required field, an unknown field, text that is not valid Unicode or holds NUL, a number out of
range or with thousands of digits, nesting a thousand levels deep, a wrong envelope (``t``,
``d``, ``a`` of the wrong type, an extra key, a non-object), cut-off JSON, a binary frame.

The schema below is the test's own reading of docs/protocol.md, not the server's table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from server.transport.codec import INT_MAX, INT_MIN, MAX_NUMBER_LENGTH

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

# --- values -----------------------------------------------------------------------------------

BAD_CHARACTERS = st.sampled_from(["\x00"]) | st.characters(
    min_codepoint=0xD800, max_codepoint=0xDFFF
)
bad_text = st.builds(
    lambda before, bad, after: before + bad + after,
    st.text(max_size=6),
    BAD_CHARACTERS,
    st.text(max_size=6),
)
CONTROL_CHARACTERS = st.sampled_from(["\t", "\r", "\n", "\x1b", "\x7f", "\x85", "\x9b"]) | (
    st.sampled_from(["\u2028", "\u2029", "\u202a", "\u202e", "\u2066", "\u2069"])
)
control_text = st.builds(
    lambda before, bad, after: before + bad + after,
    st.text(max_size=6),
    CONTROL_CHARACTERS,
    st.text(max_size=6),
)
"""Text no user-text field accepts: a control character, line break or bidirectional override
(``server.hub.user_text``); secrets (passwords, tokens) may hold them."""
deep = st.builds(
    lambda n, kind: Raw("[" * n + "]" * n if kind else '{"x":' * n + "0" + "}" * n),
    st.integers(min_value=17, max_value=3000),
    st.booleans(),
)
huge_number = st.builds(
    lambda digits, sign, tail: Raw(sign + "9" * digits + tail),
    st.integers(min_value=33, max_value=6000),
    st.sampled_from(["", "-"]),
    st.sampled_from(["", ".5", "e10"]),
) | st.sampled_from([Raw("1e400"), Raw("-1e999"), Raw("NaN"), Raw("Infinity"), Raw("-Infinity")])
plain_text = st.text(max_size=12)
any_json: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | plain_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(plain_text, inner, max_size=3),
    max_leaves=6,
)
BY_TYPE: dict[str, st.SearchStrategy[Any]] = {
    "null": st.none(),
    "bool": st.booleans(),
    "int": st.integers(min_value=-(2**70), max_value=2**70) | st.sampled_from([0, -1, MAX_ID + 1]),
    "float": st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([1.0, 0.5, -0.0]),
    "string": plain_text | bad_text | st.sampled_from(["", "x" * 1000, "１２", "1", "true"]),
    "array": st.lists(any_json, max_size=3),
    "object": st.dictionaries(plain_text, any_json, max_size=3),
}


CHOICE_WORDS = frozenset(
    ("first", "second", "random", "win", "draw", "arena", "swiss", "round_robin",
     "double_round_robin", "created", "started", "finished")
)


def wrong_value(spec: Field) -> st.SearchStrategy[Any]:
    """A value no field of ``spec`` accepts (``null`` only where the field is required)."""
    accepted = set(ACCEPTED_TYPES[spec.kind])
    if not spec.required:
        accepted.add("null")
    choices = [strategy for name, strategy in BY_TYPE.items() if name not in accepted]
    choices += [deep, huge_number, bad_text.map(lambda text: [text])]
    if spec.kind in ("string", "choice", "count"):
        choices.append(bad_text)
    if spec.kind in ("string", "choice") and not spec.secret:
        choices.append(control_text)
    if spec.kind == "int":
        choices.append(
            st.integers(max_value=spec.low - 1) | st.integers(min_value=spec.high + 1)
        )
    if spec.kind == "choice":
        choices.append(plain_text.filter(lambda text: text not in CHOICE_WORDS))
    if spec.kind == "tc":
        choices.append(
            st.fixed_dictionaries({"kind": st.just("fischer"), "base_s": st.just(600)})
        )  # missing inc_s
    if spec.kind == "range":
        choices.append(st.lists(st.integers(0, 4000), max_size=5).filter(lambda x: len(x) != 2))
    return st.one_of(choices)


def valid_ack() -> st.SearchStrategy[Any]:
    return st.none() | st.integers(-MAX_ID, MAX_ID) | st.text(min_size=1, max_size=64).filter(
        lambda text: "\x00" not in text
    )


invalid_ack = st.one_of(
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(any_json, max_size=2),
    st.dictionaries(plain_text, any_json, max_size=2),
    st.integers(min_value=MAX_ID + 1, max_value=2**80),
    st.integers(max_value=-MAX_ID - 1, min_value=-(2**80)),
    st.just(""),
    st.text(min_size=65, max_size=80),
    bad_text,
    deep,
    huge_number,
)

# --- frames -----------------------------------------------------------------------------------


@dataclass
class Frame:
    """A generated frame: JSON-like ``body`` (with Raw and Live leaves) or a prepared text,
    and what it was made of (to know the expected answer)."""

    body: Any
    kind: str = ""  # the frame type it was made from
    mutations: list[str] = field(default_factory=list)
    cut: int | None = None  # keep only this many characters of the text
    binary: bool = False

    def render(self, live: Mapping[str, Any]) -> str | bytes:
        text = render(self.body, live)
        if self.cut is not None:
            text = text[: min(self.cut, len(text) - 1)]
        return text.encode() if self.binary else text


MUTATIONS = (
    "wrong_type",
    "missing",
    "unknown_field",
    "bad_t",
    "unknown_t",
    "bad_d",
    "bad_a",
    "extra_key",
    "not_object",
    "cut",
    "binary",
    "deep_anywhere",
)


# Strategies built once (building them per draw costs more than drawing from them).
WRONG_VALUES = {(kind, name): wrong_value(spec) for kind in SCHEMA for name, spec in SCHEMA[kind].items()}
FIELD_NAMES = {kind: st.sampled_from(sorted(fields)) for kind, fields in SCHEMA.items() if fields}
REQUIRED = {
    kind: st.sampled_from(sorted(n for n, spec in fields.items() if spec.required))
    for kind, fields in SCHEMA.items()
    if any(spec.required for spec in fields.values())
}
KINDS = st.sampled_from(sorted(SCHEMA))
BOOLEANS = st.booleans()
VALID_ACK = valid_ack()
WRONG_IN_TC = st.one_of(BY_TYPE["array"], BY_TYPE["object"], deep, bad_text)
BAD_T = st.one_of(
    *(s for n, s in BY_TYPE.items() if n != "string"),
    bad_text,
    deep,
    st.just(""),
    st.text(min_size=33, max_size=40),
)
UNKNOWN_T = plain_text.filter(lambda text: text not in SCHEMA)
BAD_D = st.one_of(*(s for n, s in BY_TYPE.items() if n not in ("object", "null")), deep, huge_number)
EXTRA_KEY = plain_text.filter(lambda text: text not in ("t", "d", "a")) | bad_text
NOT_OBJECT = st.one_of(*(s for n, s in BY_TYPE.items() if n != "object"), deep)
MUTATION_LISTS = st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3)
ANY_KEY = plain_text | bad_text
ANY_VALUE = any_json | deep | huge_number
DEEP_OR_HUGE = deep | huge_number


@st.composite
def frames(draw: st.DrawFn, kinds: st.SearchStrategy[str] = KINDS) -> Frame:
    """One invalid frame (see the module docstring), of one of ``kinds`` (default: any)."""
    kind = draw(kinds)
    fields = SCHEMA[kind]
    payload: dict[str, Any] = {
        name: spec.valid for name, spec in fields.items() if spec.required or draw(BOOLEANS)
    }
    body: dict[str, Any] = {"t": kind}
    if payload or draw(BOOLEANS):
        body["d"] = payload
    ack = draw(VALID_ACK)
    if ack is not None:
        body["a"] = ack
    frame = Frame(body, kind)
    for mutation in draw(MUTATION_LISTS):
        _mutate(draw, frame, kind, mutation)
    return frame


def _mutate(draw: st.DrawFn, frame: Frame, kind: str, mutation: str) -> None:
    body = frame.body
    if not isinstance(body, dict) and mutation not in ("cut", "binary"):
        mutation = "cut"
    fields = SCHEMA[kind]
    payload = body.get("d") if isinstance(body, dict) else None
    if mutation in ("wrong_type", "missing") and (not fields or not isinstance(payload, dict)):
        mutation = "unknown_field"
    if mutation == "missing" and not any(spec.required for spec in fields.values()):
        mutation = "wrong_type"
    if mutation == "unknown_field" and not isinstance(payload, dict):
        mutation = "extra_key"
    frame.mutations.append(mutation)
    if mutation == "wrong_type":
        assert isinstance(payload, dict)
        name = draw(FIELD_NAMES[kind])
        spec = fields[name]
        if spec.kind == "tc" and isinstance(payload.get(name), dict) and draw(BOOLEANS):
            inner = dict(TC)
            inner[draw(st.sampled_from(sorted(TC)))] = draw(WRONG_IN_TC)
            payload[name] = inner
        else:
            payload[name] = draw(WRONG_VALUES[kind, name])
    elif mutation == "missing":
        assert isinstance(payload, dict)
        payload.pop(draw(REQUIRED[kind]), None)
    elif mutation == "unknown_field":
        assert isinstance(payload, dict)
        name = draw(ANY_KEY)
        if name in fields:
            name += "_x"
        payload[name] = draw(ANY_VALUE)
    elif mutation == "bad_t":
        body["t"] = draw(BAD_T)
    elif mutation == "unknown_t":
        body["t"] = draw(UNKNOWN_T)
    elif mutation == "bad_d":
        body["d"] = draw(BAD_D)
    elif mutation == "bad_a":
        body["a"] = draw(invalid_ack)
    elif mutation == "extra_key":
        name = draw(EXTRA_KEY)
        body[name] = draw(any_json)
    elif mutation == "not_object":
        frame.body = draw(NOT_OBJECT)
    elif mutation == "cut":
        frame.cut = draw(st.integers(min_value=0, max_value=200))
    elif mutation == "binary":
        frame.binary = True
    elif mutation == "deep_anywhere":
        target = payload if isinstance(payload, dict) else body
        target[draw(plain_text)] = draw(DEEP_OR_HUGE)


def render(value: Any, live: Mapping[str, Any]) -> str:
    """JSON text of ``value``: Raw leaves as they are, Live leaves looked up in ``live``, strings
    ASCII-escaped (so a lone surrogate is written ``\\ud800``, NUL ``\\u0000``)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Live):
        return json.dumps(live[value.name])
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{render(v, live)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(render(v, live) for v in value) + "]"
    return json.dumps(value)


def _bad_string(text: str) -> bool:
    return "\x00" in text or any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


def refused_before_parsing(value: Any, *, text: bool = True) -> bool:
    """Whether the JSON of ``value`` holds something the decoder refuses: deep nesting, a huge
    number (refused while decoding: the answer cannot carry the ack id), or, with ``text``, bad
    text (refused once decoded: the answer carries the frame's valid ack id)."""
    if isinstance(value, Raw):
        return True
    if isinstance(value, str):
        return text and _bad_string(value)
    if isinstance(value, bool) or value is None or isinstance(value, Live):
        return False
    if isinstance(value, int):
        return len(str(value)) > MAX_NUMBER_LENGTH or not INT_MIN <= value <= INT_MAX
    if isinstance(value, float):
        return len(json.dumps(value)) > 32
    if isinstance(value, dict):
        return any(
            (text and _bad_string(k)) or refused_before_parsing(v, text=text)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return any(refused_before_parsing(v, text=text) for v in value)
    return False


def expected_ack(frame: Frame) -> Any:
    """The ack id the answer must carry: the frame's, when it is valid and readable."""
    if frame.cut is not None or frame.binary or not isinstance(frame.body, dict):
        return None
    if refused_before_parsing(frame.body, text=False):
        return None
    ack = frame.body.get("a")
    if isinstance(ack, bool):
        return None
    if isinstance(ack, int) and abs(ack) <= MAX_ID:
        return ack
    if isinstance(ack, str) and 0 < len(ack) <= 64 and not _bad_string(ack):
        return ack
    return None


def draw_examples(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """``count`` values of ``strategy``, the same ones on every run (derandomized)."""
    drawn: list[Any] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn


# --- HTTP ---------------------------------------------------------------------------------------

LIST_FIELDS = ("player", "variant", "result", "status", "since", "until", "limit", "offset", "cursor")
edge_dates = st.sampled_from(
    [
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59-01:00",
        "0001-01-01",
        "9999-12-31T23:59:59.999999Z",
        "2024-02-30",
        "2024-05-01T25:00:00",
        "2024-05-01T12:00:00+24:00",
        "2024-05-01T12:00:00+23:59",
        "20240501",
        "2024-W18-3",
    ]
)
query_value = st.one_of(
    plain_text.map(lambda text: quote(text, safe="")),
    bad_text.map(lambda text: quote(text.encode("utf-8", "surrogatepass"), safe="")),
    st.sampled_from(["%00", "a%00b", "%FF", "%ED%A0%80", "%C0%80", "%", "%G1", "+", "%2B", ""]),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.text(alphabet="0123456789", min_size=30, max_size=5000),
    edge_dates.map(lambda text: quote(text, safe="")),
    st.sampled_from(["minishogi", "spartan", "1-0", "1%2F2-1%2F2", "finished", "5", "100", "101"]),
)
query_name = st.one_of(
    st.sampled_from((*LIST_FIELDS, "ply")),
    plain_text.map(lambda t: quote(t, safe="")),
    st.just("%00"),
)
VALID_PARAMS = {
    "player": ["a", "Guest-1", "%C3%A9l%C3%A8ve"],
    "variant": ["minishogi", "spartan"],
    "result": ["1-0", "1%2F2-1%2F2"],
    "status": ["finished", "started"],
    "since": ["2024-01-01", "0001-01-01", "2024-05-01T12:00:00%2B02:00"],
    "until": ["9999-12-31", "2100-01-01T00:00:00Z"],
    "limit": ["1", "100"],
    "offset": ["0", "3"],
}
OTHER_PATHS = [
    "/healthz",
    "/api/variants",
    "/",
    "/game/{junk}",
    "/static/{junk}",
    "/{junk}",
    "/ws",
    "/api",
    "/api/{junk}",
]
GAME_PATHS = [
    "/api/games/{game}",
    "/api/games/{game}.pgn",
    "/api/games/{game}.kif",
    "/api/games/{game}.usi",
    "/api/games/{game}.zip",
    "/api/games/{junk}",
    "/api/games/{junk}.pgn",
    "/api/games/{game}/more",
]


@st.composite
def http_targets(draw: st.DrawFn) -> str:
    """A GET target on the review API: mostly valid parameters with one or two fuzzed ones
    (so that the fuzzed value reaches the store), or any names and values at all."""
    choice = draw(st.integers(0, 7))
    if choice == 0:
        # The other endpoints take no parameters: any query is ignored, never a failure.
        path = draw(st.sampled_from(OTHER_PATHS))
        junk = draw(plain_text.map(lambda text: quote(text, safe="")) | st.sampled_from(["%00", "%FF"]))
        path = path.replace("{junk}", junk or "x")
        params = {}
    elif choice <= 2:
        path = draw(st.sampled_from(GAME_PATHS))
        junk = draw(
            plain_text.map(lambda text: quote(text, safe="")) | st.sampled_from(["%00", "%FF", "x" * 40])
        )
        path = path.replace("{junk}", junk or "x")
        params = {"ply": draw(st.sampled_from(["0", "1"]))} if draw(BOOLEANS) else {}
    else:
        path = draw(st.sampled_from(["/api/games", "/api/games/"]))
        names = draw(st.lists(st.sampled_from(sorted(VALID_PARAMS)), max_size=4, unique=True))
        params = {name: draw(st.sampled_from(VALID_PARAMS[name])) for name in names}
    pairs = list(params.items())
    for _ in range(draw(st.integers(0, 2))):
        name = draw(query_name)
        value = draw(edge_dates.map(lambda text: quote(text, safe="")) if name in ("since", "until") and draw(BOOLEANS) else query_value)
        if name in params and draw(BOOLEANS):
            pairs = [(n, value if n == name else v) for n, v in pairs]
        else:
            pairs.append((name, value))
    if not pairs:
        return path
    return path + "?" + "&".join(f"{name}={value}" for name, value in pairs)


# --- well-formed frames -------------------------------------------------------------------------

CHOICES = {
    "colour": ("first", "second", "random"),
    "outcome": ("win", "draw"),
    "format": ("arena", "swiss", "round_robin", "double_round_robin"),
    "status": ("created", "started", "finished"),
}
valid_tc = st.fixed_dictionaries(
    {"kind": st.just("fischer"), "base_s": st.integers(15, 10_800), "inc_s": st.integers(0, 180)}
) | st.fixed_dictionaries(
    {
        "kind": st.just("byoyomi"),
        "main_s": st.integers(0, 10_800),
        "period_s": st.integers(1, 600),
        "periods": st.integers(1, 10),
    }
)
# Every string field takes 1 to 32 characters at least; valid text only.
valid_string = st.text(min_size=1, max_size=32).filter(lambda text: not _bad_string(text))


def valid_value(name: str, spec: Field) -> st.SearchStrategy[Any]:
    """Any value the field's schema accepts (often the live one, so that commands hit real
    games and seeks)."""
    if spec.kind == "string":
        strategy = valid_string
    elif spec.kind == "int":
        strategy = st.integers(spec.low, spec.high)
    elif spec.kind == "count":
        strategy = st.integers(0, 10_000) | st.integers(0, 10_000).map(str)
    elif spec.kind == "bool":
        strategy = st.booleans()
    elif spec.kind == "choice":
        strategy = st.sampled_from(CHOICES[name])
    elif spec.kind == "tc":
        strategy = valid_tc
    else:
        strategy = st.lists(st.integers(0, 4000), min_size=2, max_size=2).map(sorted)
    if spec.valid is not None:
        strategy = st.just(spec.valid) | strategy
    if not spec.required:
        strategy = st.none() | strategy
    return strategy


VALID_VALUES = {
    (kind, name): valid_value(name, spec) for kind in SCHEMA for name, spec in SCHEMA[kind].items()
}
WELL_FORMED_KINDS = st.sampled_from(sorted(set(SCHEMA) - {"logout", "logout_everywhere"}))


@st.composite
def well_formed_frames(draw: st.DrawFn) -> dict[str, Any]:
    """A frame every schema accepts (its type's fields with values of the right type and range,
    optional ones sometimes absent or null); the ack id is added when it is sent. ``logout``
    and ``logout_everywhere`` are left out: they close the connection, as documented."""
    kind = draw(WELL_FORMED_KINDS)
    payload = {
        name: draw(VALID_VALUES[kind, name])
        for name, spec in SCHEMA[kind].items()
        if spec.required or draw(BOOLEANS)
    }
    body: dict[str, Any] = {"t": kind}
    if payload or draw(BOOLEANS):
        body["d"] = payload
    return body

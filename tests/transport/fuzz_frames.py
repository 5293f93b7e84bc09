"""Hypothesis strategies of bad client input for the fuzz suite (test_transport_fuzz.py).

Every frame drawn here is invalid *by construction*: a valid frame of some type (with live
values — the real game id, the next ply, a legal move — substituted when it is sent) gets one to
three mutations, each of which alone makes it invalid: a field of a wrong JSON type, a missing
required field, an unknown field, text that is not valid Unicode or holds NUL, a number out of
range or with thousands of digits, nesting a thousand levels deep, a wrong envelope (``t``,
``d``, ``a`` of the wrong type, an extra key, a non-object), cut-off JSON, a binary frame.

The frame types and their fields come from fuzz_schema.py (the test's own reading of
docs/protocol.md, not the server's table), the bad values from fuzz_values.py. Also
well-formed frames: any frame the schema accepts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fuzz_schema import CHOICES, MAX_ID, SCHEMA, TC, Field, Live, Raw
from fuzz_values import (
    BOOLEANS,
    BY_TYPE,
    any_json,
    bad_text,
    deep,
    huge_number,
    invalid_ack,
    plain_text,
    valid_ack,
    wrong_value,
)
from hypothesis import strategies as st

from server.transport.codec import INT_MAX, INT_MIN, MAX_NUMBER_LENGTH

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


# --- well-formed frames -------------------------------------------------------------------------

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

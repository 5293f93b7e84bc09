"""Hypothesis strategies of JSON values for the fuzz tests: text that is not valid Unicode or
holds NUL, text with a control character, nesting a thousand levels deep, numbers out of range
or with thousands of digits, any JSON; a wrong value for each kind of schema field
(fuzz_schema.py), valid and invalid ack ids; and ``draw_examples``, a fixed list of a
strategy's values for the tests that loop over examples themselves.
"""

from __future__ import annotations

from typing import Any

from fuzz_schema import ACCEPTED_TYPES, MAX_ID, Field, Raw
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

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


BOOLEANS = st.booleans()


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

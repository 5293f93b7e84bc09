"""The frame decoder (server.transport.codec.decode): safe for any text, exact for valid frames."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.hub.fields import valid_text
from server.transport.codec import (
    INT_MAX,
    INT_MIN,
    MAX_DEPTH,
    MAX_NUMBER_LENGTH,
    DecodeError,
    decode,
    encode,
)

PROPERTY = settings(
    max_examples=400, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)

# JSON values the decoder must give back unchanged: text that is valid Unicode without NUL,
# numbers it accepts, nesting it accepts.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=INT_MIN, max_value=INT_MAX)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text().filter(valid_text)
)
keys = st.text(max_size=8).filter(valid_text)


def nested(depth: int) -> st.SearchStrategy[Any]:
    if depth == 0:
        return scalars
    inner = nested(depth - 1)
    return scalars | st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3)


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    return 0


@PROPERTY
@given(nested(4), st.booleans())
def test_valid_json_round_trips(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert decode(text) == value
    assert decode(text.encode()) == value


@PROPERTY
@given(st.text(alphabet=st.sampled_from('[]{}",:0123456789.eE+-\\u tnrfalsd\ud800'), max_size=60))
def test_any_text_is_decoded_or_refused_and_what_is_decoded_can_be_encoded(text: str) -> None:
    try:
        value = decode(text)
    except DecodeError as error:
        assert error.code in ("bad_json", "bad_request") and error.message
        assert valid_text(error.message.replace("\\", ""))  # the message itself is safe to send
        return
    encode(value)
    json.dumps(value, ensure_ascii=False).encode()  # no lone surrogate anywhere
    assert depth_of(value) <= MAX_DEPTH


@PROPERTY
@given(
    st.builds(
        lambda before, bad, after: before + bad + after,
        st.text(max_size=5),
        st.sampled_from(["\x00"]) | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
        st.text(max_size=5),
    ),
    st.sampled_from("vkl"),
)
def test_invalid_text_is_refused_wherever_it_is(bad: str, where: str) -> None:
    frame = {
        "v": {"t": "chat", "d": {"text": bad}, "a": 7},
        "k": {"d": {bad: 1}, "a": "x"},
        "l": [[1, bad]],
    }[where]
    with pytest.raises(DecodeError) as caught:
        decode(json.dumps(frame))
    assert caught.value.code == "bad_request"
    assert "not valid Unicode" in caught.value.message
    # the frame is JSON: its ack id is known, so the client's request gets its answer
    assert caught.value.ack == {"v": 7, "k": "x", "l": None}[where]


tricky_text = st.text(alphabet='[]{}"\\/xé', max_size=6)


def chain(depth: int) -> st.SearchStrategy[Any]:
    """Values nested exactly ``depth`` levels, with bracket-laden strings on the way."""
    if depth == 0:
        return tricky_text | st.integers(min_value=INT_MIN, max_value=INT_MAX)
    inner = chain(depth - 1)
    return st.builds(lambda t, v: [t, v], tricky_text, inner) | st.builds(
        lambda k, v: {k: v}, tricky_text, inner
    )


CHAINS = st.one_of([chain(depth) for depth in range(MAX_DEPTH - 2, MAX_DEPTH + 3)])


@PROPERTY
@given(CHAINS)
def test_depth_is_measured_exactly_whatever_the_strings_hold(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    if depth_of(value) <= MAX_DEPTH:
        assert decode(text) == value
    else:
        with pytest.raises(DecodeError, match="deeper than"):
            decode(text)


@pytest.mark.parametrize(
    ("text", "code", "fragment"),
    [
        ("[" * MAX_DEPTH + "]" * MAX_DEPTH, None, None),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "bad_request", "deeper than"),
        ('{"a":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1), "bad_request", "deeper than"),
        ("[" * 100_000, "bad_request", "deeper than"),
        ('["' + "[" * 1000 + '"]', None, None),  # brackets in strings do not nest
        ('["\\"' + "[" * 1000 + '"]', None, None),
        ("0." + "9" * (MAX_NUMBER_LENGTH - 2), None, None),
        ("9223372036854775807", None, None),  # the largest signed 64-bit integer
        ("-9223372036854775808", None, None),
        ("9223372036854775808", "bad_request", "out of range"),  # orjson could not encode it
        ("-9223372036854775809", "bad_request", "out of range"),
        ("9" * MAX_NUMBER_LENGTH, "bad_request", "out of range"),
        ("9" * (MAX_NUMBER_LENGTH + 1), "bad_request", "more than"),
        ("-" + "9" * 5000, "bad_request", "more than"),
        ("0." + "1" * 5000, "bad_request", "more than"),
        ("1e400", "bad_request", "too large"),
        ("-1e400", "bad_request", "too large"),
        ("NaN", "bad_json", "NaN"),
        ("[Infinity]", "bad_json", "Infinity"),
        ('"\\ud800"', "bad_request", "frame is not valid Unicode"),
        ('{"a": ["\\udfff"]}', "bad_request", "frame.a[0]"),
        ('{"\\ud800": 1}', "bad_request", "frame['\\ud800']"),
        ('{"a": "x\\u0000"}', "bad_request", "frame.a"),
        ('"\\ud83d\\ude00"', None, None),  # a surrogate pair is one character
        ("", "bad_json", "not valid JSON"),
        ("{", "bad_json", "not valid JSON"),
        (b"\xff", "bad_json", "UTF-8"),
    ],
)
def test_limits(text: str | bytes, code: str | None, fragment: str | None) -> None:
    if code is None:
        decode(text)
        return
    with pytest.raises(DecodeError) as caught:
        decode(text)
    assert caught.value.code == code
    assert fragment is not None and fragment in caught.value.message

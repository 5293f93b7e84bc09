"""The cluster's envelopes (server/cluster/envelopes.py): every kind built, packed, unpacked and
parsed back; anything else refused with EnvelopeError and nothing else; docs/architecture.md
lists the same kinds and fields. Pure functions, no I/O."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any, NotRequired, get_args, get_origin, get_type_hints

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.cluster.envelopes import (
    HEADER_TYPES,
    NOTICE_KINDS,
    EnvelopeError,
    EnvelopeKind,
    Header,
    attach_header,
    close_header,
    cmd_header,
    detach_header,
    here_header,
    moved_header,
    out_header,
    pack,
    parse_header,
    reply_header,
    split_batch,
    unpack,
    whois_header,
)
from server.cluster.wire import player_to_json
from server.hub.identity import PlayerInfo, Rating

ROOT = Path(__file__).resolve().parents[2]
IDENTITY = player_to_json(
    PlayerInfo("u7", "Alice", False, {("minishogi", "blitz"): Rating(1623.5)})
)
BOT = player_to_json(PlayerInfo("b1", "Robo", False, {}, bot=True))

SAMPLES: list[Header] = [
    out_header("move", [3]),
    out_header("move", [3, 4], game="u8jzPde0", version=1795361832612, previous=[17, None]),
    out_header("game_start", [2], game="u8jzPde0"),
    out_header("challenge", [1], challenge=2**40 + 7),
    reply_header(5, 12, message={"t": "ack", "d": {"game": "g", "ply": 3}}),
    reply_header(5, 12, moved=True),
    reply_header(5, 12, unknown=True),
    cmd_header(5, {"t": "move", "d": {"game": "g", "ply": 3, "move": "c4c5+"}, "a": "~12"}, 4, 12),
    cmd_header(5, {"t": "who", "a": "~13"}, 0, 13, IDENTITY),
    attach_header(5, IDENTITY),
    attach_header(6, BOT),
    detach_header(5),
    close_header(5, "fenced"),
    here_header(9),
    whois_header(9, "Alice"),
    moved_header("u8jzPde0", ["u7", "u8"]),
]
SENDER = "node-0123456789ab"


def _wire(header: Header) -> dict[str, Any]:
    """The header as it reads back from JSON (tuples become lists), signed."""
    obj: dict[str, Any] = json.loads(json.dumps(header))
    obj["from"] = SENDER
    return obj


def _hints(kind: EnvelopeKind) -> dict[str, Any]:
    return get_type_hints(HEADER_TYPES[kind], include_extras=True)


def _required(kind: EnvelopeKind) -> set[str]:
    hints = _hints(kind)
    return {key for key, hint in hints.items() if get_origin(hint) is not NotRequired}


def _base(kind: EnvelopeKind, key: str) -> type:
    """The JSON type of a field: int, str, bool, list or dict."""
    hint = _hints(kind)[key]
    if get_origin(hint) is NotRequired:
        hint = get_args(hint)[0]
    origin = get_origin(hint) or hint
    return dict if isinstance(origin, type) and issubclass(origin, dict) else origin


# --- every kind travels ----------------------------------------------------------------------


def test_every_kind_has_samples_and_a_builder() -> None:
    assert {header["k"] for header in SAMPLES} == set(EnvelopeKind)
    assert set(HEADER_TYPES) == set(EnvelopeKind)


@pytest.mark.parametrize("header", SAMPLES, ids=lambda h: str(h["k"]))
def test_a_header_travels_and_is_parsed_back(header: Header) -> None:
    body = b'{"t":"move","d":{"text":"two\\nlines"}}'
    sender, parsed, rest = unpack(pack(header, SENDER, body))
    assert (sender, parsed, rest) == (SENDER, _wire(header), body)
    assert parsed["k"] is header["k"]  # the enum member, so dispatch may use ``is``
    assert "from" not in header  # signing does not touch the caller's header


def test_a_batch_travels() -> None:
    batch = b"\n".join(pack(header, SENDER, b"{}") for header in SAMPLES)
    pairs = split_batch(batch)
    assert [parse_header(line) for line, _ in pairs] == [(SENDER, _wire(h)) for h in SAMPLES]
    assert [body for _, body in pairs] == [b"{}"] * len(SAMPLES)
    with pytest.raises(EnvelopeError):
        split_batch(batch + b"\nstray")


def test_unknown_fields_are_ignored() -> None:
    """A newer node may add optional fields; this one reads what it knows."""
    line = pack(detach_header(5), SENDER).split(b"\n")[0]
    newer = line[:-1] + b',"zz":[1,{"a":null}]}'
    sender, header = parse_header(newer)
    assert sender == SENDER
    assert header["k"] is EnvelopeKind.DETACH and header["c"] == 5


def test_cross_field_rules() -> None:
    for bad in (
        {"k": "out", "t": "move", "c": [1, 2], "pv": [None]},  # one pv per connection
        {"k": "reply", "c": 1, "call": 2},  # no outcome
        {"k": "reply", "c": 1, "call": 2, "m": {"d": {}}},  # a message without its kind
        {"k": "attach", "c": 1, "p": {"id": "u", "name": "n", "guest": "no", "ratings": []}},
        {"k": "out", "t": "move", "c": [True]},  # a bool is not a connection id
        {"k": "attach", "c": 1, "p": {**IDENTITY, "ratings": [["x", None, 10**400, 1.0, 1.0]]}},
    ):
        with pytest.raises(EnvelopeError):
            parse_header(json.dumps({**bad, "from": SENDER}).encode())
    with pytest.raises(EnvelopeError):
        parse_header(b"[" * 100_000)  # deeper than the decoder goes


# --- anything else is refused, with EnvelopeError only ---------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)
KEYS = sorted({key for kind in EnvelopeKind for key in _hints(kind)} | {"from"})


def _refused_or_parsed(line: bytes) -> None:
    try:
        sender, header = parse_header(line)
    except EnvelopeError:
        return
    assert isinstance(sender, str) and header["k"] in EnvelopeKind
    assert _required(header["k"]) <= set(header)


@given(
    st.fixed_dictionaries(
        {"id": JSON_VALUES, "name": JSON_VALUES, "guest": JSON_VALUES},
        optional={"bot": JSON_VALUES, "ratings": st.lists(st.lists(JSON_VALUES, max_size=6))},
    )
)
def test_random_identities_are_refused_or_read(identity: dict[str, Any]) -> None:
    for header in ({"k": "attach", "c": 1, "p": identity}, {"k": "cmd", "c": 1, "f": {},
                   "lag": 0, "call": 2, "p": identity}):  # fmt: skip
        _refused_or_parsed(json.dumps({**header, "from": SENDER}).encode())


@given(st.binary(max_size=200))
def test_junk_bytes_are_refused(data: bytes) -> None:
    with contextlib.suppress(EnvelopeError):
        unpack(data)
    with contextlib.suppress(EnvelopeError):
        for line, _ in split_batch(data):
            _refused_or_parsed(line)
    _refused_or_parsed(data)


@given(
    st.dictionaries(
        st.sampled_from(KEYS) | st.text(max_size=4),
        JSON_VALUES | st.sampled_from([*EnvelopeKind, SENDER]),
        max_size=8,
    )
)
@settings(max_examples=300)
def test_random_headers_are_refused_or_well_formed(obj: dict[str, Any]) -> None:
    _refused_or_parsed(json.dumps(obj).encode())


@given(st.sampled_from(SAMPLES), st.data())
def test_a_header_missing_a_field_is_refused(header: Header, data: st.DataObject) -> None:
    obj = _wire(header)
    key = data.draw(st.sampled_from(sorted((_required(header["k"]) - {"k"}) | {"k", "from"})))
    del obj[key]
    with pytest.raises(EnvelopeError):
        parse_header(json.dumps(obj).encode())


def _not_of(base: type) -> st.SearchStrategy[Any]:
    def fits(value: Any) -> bool:
        return isinstance(value, base) and not (base is int and isinstance(value, bool))

    return JSON_VALUES.filter(lambda value: not fits(value))


@given(st.sampled_from(SAMPLES), st.data())
def test_a_field_of_the_wrong_type_is_refused(header: Header, data: st.DataObject) -> None:
    obj = _wire(header)
    key = data.draw(st.sampled_from(sorted(set(obj) - {"k", "from"})))
    obj[key] = data.draw(_not_of(_base(header["k"], key)))
    with pytest.raises(EnvelopeError):
        parse_header(json.dumps(obj).encode())


NOT_INT = st.text(max_size=3) | st.floats(allow_nan=False) | st.booleans()
NOT_STR = st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()


@given(st.sampled_from(SAMPLES), st.data())
def test_a_list_with_a_wrong_item_is_refused(header: Header, data: st.DataObject) -> None:
    obj = _wire(header)
    lists = sorted(key for key in ("c", "pv", "players") if isinstance(obj.get(key), list))
    if not lists:
        return
    key = data.draw(st.sampled_from(lists))
    wrong = data.draw(NOT_STR if key == "players" else NOT_INT)
    obj[key] = [*obj[key][:-1], wrong]  # the same length: pv stays one per connection
    with pytest.raises(EnvelopeError):
        parse_header(json.dumps(obj).encode())


@given(st.sampled_from(SAMPLES), JSON_VALUES)
def test_a_wrong_kind_or_sender_is_refused(header: Header, value: Any) -> None:
    for key in ("k", "from"):
        if key == "k" and value in list(EnvelopeKind):
            continue
        if key == "from" and isinstance(value, str):
            continue
        obj = {**_wire(header), key: value}
        with pytest.raises(EnvelopeError):
            parse_header(json.dumps(obj).encode())


# --- docs/architecture.md lists the kinds ----------------------------------------------------


def _documented() -> dict[str, tuple[str, list[str]]]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    start = text.index("\n### Envelopes between nodes\n")
    section = text[start : text.index("\n### ", start + 1)]
    rows: dict[str, tuple[str, list[str]]] = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.split("|")[1:-1]]
            rows[cells[0].strip("`")] = (cells[1], re.findall(r"`([a-z]+\??)`", cells[2]))
    return rows


def test_the_architecture_doc_lists_every_kind_and_field() -> None:
    documented = _documented()
    assert list(documented) == [kind.value for kind in EnvelopeKind]
    for kind in EnvelopeKind:
        channel, fields = documented[kind]
        assert channel == ("`nodes`" if kind in NOTICE_KINDS else "`node:<id>`"), kind
        required = _required(kind)
        expected = [key if key in required else f"{key}?" for key in _hints(kind) if key != "k"]
        assert fields == expected, kind

"""The cluster's own vocabulary: every kind of envelope nodes send each other, defined once.

An **envelope** is a JSON header, a newline, and an optional body — usually a client frame
that was encoded once by the hub's node and is passed to the client's socket unchanged (compact
JSON never contains a raw newline, so the first one ends the header)::

    >>> data = pack(detach_header(3), "hub1")
    >>> unpack(data)
    ('hub1', {'k': <EnvelopeKind.DETACH: 'detach'>, 'c': 3, 'from': 'hub1'}, b'')

The header names its kind ``k`` (:class:`EnvelopeKind`) and the node that sent it ``from``
(the sender signs it as it packs, :func:`pack`); each kind's fields are its ``TypedDict``
below, with the short keys the wire always had, so the wire format stays what older nodes
write and read during a rolling upgrade. Every sender builds its header with the kind's
builder (:func:`out_header` …); every receiver gets it from :func:`parse_header`, which
checks the kind and each field's type (derived from the ``TypedDict``) and refuses anything
else with :class:`EnvelopeError` (the inbox logs and drops it). Fields it does not know are
ignored, so a newer node may add optional ones. docs/architecture.md lists the kinds
(``tests/cluster/test_cluster_envelopes.py`` checks the table against this module).

On a node channel several envelopes may travel as one bus message, joined by newlines
(:func:`split_batch`): the sending node batches what queued up while it was publishing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import StrEnum
from types import UnionType
from typing import (
    Any,
    Literal,
    NotRequired,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from server.cluster.wire import PlayerIdentity, player_from_json
from server.hub.messages import MessageJson
from server.jsontypes import JsonObject

__all__ = [
    "NOTICE_KINDS",
    "AttachHeader",
    "CloseHeader",
    "CmdHeader",
    "DetachHeader",
    "EnvelopeError",
    "EnvelopeKind",
    "Header",
    "HereHeader",
    "MovedHeader",
    "OutHeader",
    "ReplyHeader",
    "WhoisHeader",
    "attach_header",
    "close_header",
    "cmd_header",
    "detach_header",
    "here_header",
    "moved_header",
    "out_header",
    "pack",
    "parse_header",
    "reply_header",
    "split_batch",
    "unpack",
    "whois_header",
]


class EnvelopeError(ValueError):
    """A bus message that is not an envelope of this protocol (logged and dropped)."""


class EnvelopeKind(StrEnum):
    """Every kind ``k`` of envelope. The first seven travel on the receiving node's channel
    ``node:<id>``, the last two (:data:`NOTICE_KINDS`) on the ``nodes`` channel to every node."""

    OUT = "out"
    """Frames of this node's hub for connections of the receiving node (the body)."""
    REPLY = "reply"
    """The answer to a forwarded command (a call)."""
    CMD = "cmd"
    """A command of a connection of the sending node, to run in the receiving node's hub."""
    ATTACH = "attach"
    """A connection of the sending node joins the receiving node's hub."""
    DETACH = "detach"
    """A connection of the sending node closed: it leaves the receiving node's hub."""
    CLOSE = "close"
    """The sending node's hub closed a connection of the receiving node."""
    HERE = "here"
    """The answer to a ``whois``: the player is connected on the sending node."""
    WHOIS = "whois"
    """Where is the player of this name connected? (a notice)"""
    MOVED = "moved"
    """The sending node took a game over (a notice)."""


NOTICE_KINDS = frozenset({EnvelopeKind.WHOIS, EnvelopeKind.MOVED})
"""The kinds published on the ``nodes`` channel; the others go to one node's channel."""


class OutHeader(TypedDict):
    """``out``: ``t`` the frame's message kind; ``c`` the receiving node's connection ids it
    goes to; ``g`` its game and ``v`` its room version (room events and ``game_start``);
    ``pv`` per connection, the version of the previous room event of the game sent to that
    connection (None: not known); ``cid`` the challenge id of a ``challenge`` message."""

    k: Literal[EnvelopeKind.OUT]
    t: str
    c: list[int]
    g: NotRequired[str]
    v: NotRequired[int]
    pv: NotRequired[list[int | None]]
    cid: NotRequired[int]


class ReplyHeader(TypedDict):
    """``reply``: ``c`` the connection (on the receiving node) whose call it answers, ``call``
    the call id; then one of ``m`` the hub's answer (a message), ``moved`` (this node no longer
    runs the command's game) or ``unknown`` (the connection is not attached here: send the
    identity again)."""

    k: Literal[EnvelopeKind.REPLY]
    c: int
    call: int
    m: NotRequired[MessageJson]
    moved: NotRequired[bool]
    unknown: NotRequired[bool]


class CmdHeader(TypedDict):
    """``cmd``: ``c`` the connection (on the sending node), ``f`` the command as its client
    frame (ack ``~<call>``), ``lag`` the measured lag in ms, ``call`` the call id, ``p`` the
    player's identity (with the first command to a node only)."""

    k: Literal[EnvelopeKind.CMD]
    c: int
    f: JsonObject
    lag: int
    call: int
    p: NotRequired[PlayerIdentity]


class AttachHeader(TypedDict):
    """``attach``: ``c`` the connection (on the sending node), ``p`` its player's identity."""

    k: Literal[EnvelopeKind.ATTACH]
    c: int
    p: PlayerIdentity


class DetachHeader(TypedDict):
    """``detach``: ``c`` the connection (on the sending node)."""

    k: Literal[EnvelopeKind.DETACH]
    c: int


class CloseHeader(TypedDict):
    """``close``: ``c`` the connection (on the receiving node), ``r`` the reason."""

    k: Literal[EnvelopeKind.CLOSE]
    c: int
    r: str


class HereHeader(TypedDict):
    """``here``: ``q`` the query id of the receiving node's ``whois``."""

    k: Literal[EnvelopeKind.HERE]
    q: int


class WhoisHeader(TypedDict):
    """``whois``: ``q`` the query id (answered by ``here``), ``name`` the player's name in
    lower case."""

    k: Literal[EnvelopeKind.WHOIS]
    q: int
    name: str


class MovedHeader(TypedDict):
    """``moved``: ``g`` the game the sending node took over, ``players`` its players' ids."""

    k: Literal[EnvelopeKind.MOVED]
    g: str
    players: list[str]


Header = (
    OutHeader
    | ReplyHeader
    | CmdHeader
    | AttachHeader
    | DetachHeader
    | CloseHeader
    | HereHeader
    | WhoisHeader
    | MovedHeader
)
"""A checked envelope header of any kind; ``header["k"]`` tells which (``match`` on it)."""


# --- builders: every sender builds its header with one of these ------------------------------


def out_header(
    t: str,
    conns: list[int],
    *,
    game: str | None = None,
    version: int | None = None,
    previous: list[int | None] | None = None,
    challenge: int | None = None,
) -> OutHeader:
    """An ``out`` header (see :class:`OutHeader`)."""
    header: OutHeader = {"k": EnvelopeKind.OUT, "t": t, "c": conns}
    if game is not None:
        header["g"] = game
    if version is not None:
        header["v"] = version
    if previous is not None:
        header["pv"] = previous
    if challenge is not None:
        header["cid"] = challenge
    return header


def reply_header(
    conn: int,
    call: int,
    *,
    message: MessageJson | None = None,
    moved: bool = False,
    unknown: bool = False,
) -> ReplyHeader:
    """A ``reply`` header: the hub's answer ``message``, or ``moved`` or ``unknown``."""
    header: ReplyHeader = {"k": EnvelopeKind.REPLY, "c": conn, "call": call}
    if message is not None:
        header["m"] = message
    if moved:
        header["moved"] = True
    if unknown:
        header["unknown"] = True
    return header


def cmd_header(
    conn: int, frame: JsonObject, lag_ms: int, call: int, player: PlayerIdentity | None = None
) -> CmdHeader:
    """A ``cmd`` header (``player``: the identity, with the first command to a node)."""
    header: CmdHeader = {"k": EnvelopeKind.CMD, "c": conn, "f": frame, "lag": lag_ms, "call": call}
    if player is not None:
        header["p"] = player
    return header


def attach_header(conn: int, player: PlayerIdentity) -> AttachHeader:
    """An ``attach`` header."""
    return {"k": EnvelopeKind.ATTACH, "c": conn, "p": player}


def detach_header(conn: int) -> DetachHeader:
    """A ``detach`` header."""
    return {"k": EnvelopeKind.DETACH, "c": conn}


def close_header(conn: int, reason: str) -> CloseHeader:
    """A ``close`` header."""
    return {"k": EnvelopeKind.CLOSE, "c": conn, "r": reason}


def here_header(query: int) -> HereHeader:
    """A ``here`` header."""
    return {"k": EnvelopeKind.HERE, "q": query}


def whois_header(query: int, name: str) -> WhoisHeader:
    """A ``whois`` notice (``name`` is lower-cased)."""
    return {"k": EnvelopeKind.WHOIS, "q": query, "name": name.lower()}


def moved_header(game_id: str, players: list[str]) -> MovedHeader:
    """A ``moved`` notice."""
    return {"k": EnvelopeKind.MOVED, "g": game_id, "players": players}


# --- the wire --------------------------------------------------------------------------------


def pack(header: Header, sender: str, body: bytes = b"") -> bytes:
    """One envelope signed by node ``sender``: the header as compact JSON, a newline, then
    ``body``."""
    signed: JsonObject = dict(header)
    signed["from"] = sender
    return json.dumps(signed, separators=(",", ":")).encode() + b"\n" + body


def unpack(data: bytes) -> tuple[str, Header, bytes]:
    """The sender, checked header and body of one envelope.

    :raises EnvelopeError: no newline, or a header :func:`parse_header` refuses.
    """
    head, sep, body = data.partition(b"\n")
    if not sep:
        raise EnvelopeError("an envelope needs a header line")
    sender, header = parse_header(head)
    return sender, header, body


def split_batch(data: bytes) -> list[tuple[bytes, bytes]]:
    r"""The envelopes of a batch (envelopes joined by newlines, each exactly two lines) as
    ``(header line, body)`` pairs, each header for :func:`parse_header`.

    >>> split_batch(pack(here_header(1), "a") + b"\n" + pack(detach_header(2), "a"))
    [(b'{"k":"here","q":1,"from":"a"}', b''), (b'{"k":"detach","c":2,"from":"a"}', b'')]

    :raises EnvelopeError: an odd number of lines.
    """
    lines = data.split(b"\n")
    if len(lines) % 2:
        raise EnvelopeError("a batch has a header line and a body line per envelope")
    return [(lines[i], lines[i + 1]) for i in range(0, len(lines), 2)]


def parse_header(line: bytes) -> tuple[str, Header]:
    """The sender and the header of an envelope's header line, checked: a JSON object of a
    known kind, signed, with each of that kind's fields present when required and of its type.

    :raises EnvelopeError: anything else.
    """
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError) as error:  # (too deeply nested for the decoder)
        raise EnvelopeError(f"envelope header is not JSON: {error!r}") from None
    if type(obj) is not dict:
        raise EnvelopeError("an envelope header must be a JSON object")
    raw = obj.get("k")
    kind = _KINDS.get(raw) if type(raw) is str else None  # (a list is not even hashable)
    if kind is None:
        raise EnvelopeError(f"unknown envelope kind {raw!r}")
    sender = obj.get("from")
    if type(sender) is not str:
        raise EnvelopeError(f"a {kind} envelope without its sender")
    obj["k"] = kind
    for key, required, exact, items, check in _FIELDS[kind]:
        value: Any = obj.get(key, _MISSING)
        if value is _MISSING:
            if required:
                raise EnvelopeError(f"a {kind} envelope without {key!r}")
            continue
        if type(value) is not exact or (check is not None and not check(value)):
            raise EnvelopeError(f"a {kind} envelope with a bad {key!r}: {value!r}")
        if items is not None:
            for item in obj[key]:  # a loop, no call: an out envelope's lists are checked per move
                if type(item) not in items:
                    raise EnvelopeError(f"a {kind} envelope with a bad {key!r}: {value!r}")
    if kind is _OUT:
        pv = obj.get("pv")
        if pv is not None and len(pv) != len(obj["c"]):
            raise EnvelopeError("an out envelope needs one 'pv' per connection")
    elif kind is _REPLY and not ("m" in obj or obj.get("moved") or obj.get("unknown")):
        raise EnvelopeError("a reply envelope needs 'm', 'moved' or 'unknown'")
    return sender, obj  # type: ignore[return-value]  # checked above, field by field


# --- the checks, derived from the TypedDicts -------------------------------------------------

_MISSING: Any = object()
_OUT, _REPLY = EnvelopeKind.OUT, EnvelopeKind.REPLY  # (a module global is read faster)
_KINDS: dict[str, EnvelopeKind] = {kind.value: kind for kind in EnvelopeKind}


def _is_player(value: Any) -> bool:
    try:
        player_from_json(value)
    except ValueError:
        return False
    return True


def _is_message(value: Any) -> bool:
    return type(value.get("t")) is str


_DEEP_CHECKS: dict[Any, Callable[[Any], bool]] = {
    PlayerIdentity: _is_player,
    MessageJson: _is_message,
}
"""The fields whose type is a shape of its own (after the ``dict`` test)."""

_EXACT = (int, str, bool, type(None))


def _exact(hint: Any) -> tuple[type, ...]:
    """The exact JSON types a list item of type ``hint`` may have (``int``: never a bool)."""
    types = get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)
    if not all(t in _EXACT for t in types):
        raise TypeError(f"no check for envelope list items of type {hint!r}")
    return types


Field = tuple[str, bool, type, tuple[type, ...] | None, Callable[[Any], bool] | None]
"""``(key, required, exact JSON type, exact types of its items if a list, deeper check)``."""


def _fields(typed: type) -> tuple[Field, ...]:
    """The fields of a kind but ``k``, as :func:`parse_header` checks them: an exact ``type()``
    test, a loop over a list's items, and a call only for the rare fields of a shape of their
    own (a new field type needs a case here, or the import fails). Required-ness comes from the
    hints: Python 3.11's ``__required_keys__`` misses ``NotRequired`` in string annotations."""
    fields: list[Field] = []
    for key, hint in get_type_hints(typed, include_extras=True).items():
        if key == "k":
            continue
        optional = get_origin(hint) is NotRequired
        if optional:
            hint = get_args(hint)[0]
        items = None
        if get_origin(hint) is list:
            exact: type = list
            items = _exact(get_args(hint)[0])
        elif hint == JsonObject or hint in _DEEP_CHECKS:
            exact = dict
        elif hint in _EXACT:
            exact = hint
        else:
            raise TypeError(f"no check for envelope fields of type {hint!r}")
        fields.append((key, not optional, exact, items, _DEEP_CHECKS.get(hint)))
    return tuple(fields)


HEADER_TYPES: dict[EnvelopeKind, type] = {
    get_args(get_type_hints(typed)["k"])[0]: typed for typed in get_args(Header)
}
"""Each kind's ``TypedDict``."""

_FIELDS = {kind: _fields(typed) for kind, typed in HEADER_TYPES.items()}
assert set(_FIELDS) == set(EnvelopeKind), "a kind without its TypedDict in Header"

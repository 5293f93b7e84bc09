"""The websocket's tournament frames, read into typed requests: :func:`tournament_request_of`.

Tournament frames are a kind of their own (like the review requests of
:mod:`server.hub.incoming`): the room hub does not answer them; the tournament director of
``server.app`` does, through the websocket door (``server.transport.tournament_ws``). Their
payloads are read with the one :class:`~server.hub.commands.FieldReader` (same checks, same
``bad_request`` errors as every command), and :func:`tournament_request_schema` gives the
generated web types their fields. Pure and sans-I/O.

* ``tournament_create`` — ``name``, ``format``, ``variant``, ``tc``, ``rated``?, ``start_at_ms``?
  (epoch ms), ``start_when_joined``?, ``duration_s``? (arena), ``rounds``? (Swiss),
  ``password``?, ``min_rating``?, ``bots``?, ``computer``?, ``max_players``?, ``berserk``?;
  answered by ``ack`` with ``{"tournament": id}``.
* ``tournament_join`` — ``id``, ``password``?; ``tournament_withdraw`` — ``id``;
  ``tournament_pause`` — ``id``, ``pause``? (default true; false resumes): ``ack``.
* ``tournament`` — ``id``, ``page``?: the ``tournament`` view once, with one page of the
  standings (``server.hub.tournament.pages``; no ``page``: the one holding the sender's row, else
  page 1).
* ``tournament_watch`` — ``id``, ``page``?: the ``tournament`` view, then that page's
  ``tournament_standings`` pushed each time it changes (no ``page``: the page holding the
  sender's row, following it); ``tournament_page`` — ``id``, ``page``?: that page's
  ``tournament_standings`` now, and the page a watch of the tournament follows from now on;
  ``tournament_unwatch`` — ``id``: ``ack``.
* ``tournament_round`` — ``id``, ``round``, ``page``?: that round's (an arena's wave's)
  pairings and byes, by page of 50 (``server.hub.tournament.rounds``; no ``page``: the first),
  answered by ``tournament_round``; a round not paired yet or a page past the round's last is
  refused (``bad_request``).
* ``tournament_list`` — ``status``? (``created`` / ``started`` / ``finished``): ``tournaments``.
* ``tournament_chat`` — ``id``, ``text`` (1 to :data:`MAX_TOURNAMENT_CHAT` characters of user
  text, not only whitespace): a line in the tournament's chat, ``ack`` once stored; every
  watcher of the tournament is pushed it (``tournament_chat``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from server.hub.commands import Envelope
from server.hub.errors import ProtocolError
from server.hub.fields import MAX_NAME_LENGTH, MAX_RATING, FieldReader, FieldSpec, schema_of
from server.hub.game_ids import GAME_ID_MAX_LENGTH
from server.hub.messages import AckId
from server.hub.tournament.pages import MAX_STANDINGS_PAGE
from server.hub.tournament.rounds import MAX_ROUND, MAX_ROUND_PAGE
from server.rules.time_control import TimeControl

__all__ = [
    "MAX_TOURNAMENT_CHAT",
    "MAX_TOURNAMENT_DURATION_S",
    "TOURNAMENT_REQUEST_TYPES",
    "TournamentChat",
    "TournamentCreate",
    "TournamentJoin",
    "TournamentList",
    "TournamentPage",
    "TournamentPause",
    "TournamentRequest",
    "TournamentRound",
    "TournamentShow",
    "TournamentUnwatch",
    "TournamentWatch",
    "TournamentWithdraw",
    "tournament_request_of",
    "tournament_request_schema",
]

MAX_TOURNAMENT_NAME = 80
MAX_PASSWORD = 128
MAX_TOURNAMENT_DURATION_S = 7 * 24 * 3600
MAX_TOURNAMENT_ROUNDS = 50
MAX_EPOCH_MS = 2**53
MAX_TOURNAMENT_PLAYERS = 100_000
MAX_TOURNAMENT_CHAT = 140
"""Characters of one line of a tournament's chat."""
FORMAT_NAMES = ("arena", "swiss", "round_robin", "double_round_robin")
STATUS_NAMES = ("created", "started", "finished")


@dataclass(frozen=True, slots=True)
class TournamentRequest:
    """Base of the tournament frames; ``ack`` is the client's ack id."""

    ack: AckId | None


@dataclass(frozen=True, slots=True)
class TournamentCreate(TournamentRequest):
    name: str
    format: str
    variant: str
    control: TimeControl
    rated: bool
    start_at_ms: int | None
    start_when_joined: int | None
    duration_s: int | None
    rounds: int | None
    password: str | None
    min_rating: int | None
    bots: bool
    computer: bool
    max_players: int | None
    berserk: bool


@dataclass(frozen=True, slots=True)
class TournamentJoin(TournamentRequest):
    tournament_id: str
    password: str | None = None


@dataclass(frozen=True, slots=True)
class TournamentWithdraw(TournamentRequest):
    tournament_id: str


@dataclass(frozen=True, slots=True)
class TournamentPause(TournamentRequest):
    tournament_id: str
    pause: bool = True


@dataclass(frozen=True, slots=True)
class TournamentShow(TournamentRequest):
    tournament_id: str
    page: int | None = None
    """The standings' page shown (None: the sender's own, else page 1)."""


@dataclass(frozen=True, slots=True)
class TournamentWatch(TournamentRequest):
    tournament_id: str
    page: int | None = None
    """The standings' page watched (None: the one holding the sender's row, else page 1)."""


@dataclass(frozen=True, slots=True)
class TournamentPage(TournamentRequest):
    tournament_id: str
    page: int | None = None
    """As :attr:`TournamentWatch.page`."""


@dataclass(frozen=True, slots=True)
class TournamentRound(TournamentRequest):
    tournament_id: str
    round: int
    page: int = 1


@dataclass(frozen=True, slots=True)
class TournamentUnwatch(TournamentRequest):
    tournament_id: str


@dataclass(frozen=True, slots=True)
class TournamentList(TournamentRequest):
    status: str | None = None


@dataclass(frozen=True, slots=True)
class TournamentChat(TournamentRequest):
    tournament_id: str
    text: str


def _id(f: FieldReader) -> str:
    value: str = f.string("id", GAME_ID_MAX_LENGTH)
    return value


def _page(f: FieldReader) -> int | None:
    value: int | None = f.integer("page", 1, MAX_STANDINGS_PAGE, required=False)
    return value


def _chat(f: FieldReader, ack: AckId | None) -> TournamentRequest:
    tournament_id = _id(f)
    text: str = f.string("text", MAX_TOURNAMENT_CHAT)
    if text.isspace():
        raise ProtocolError("tournament_chat: field 'text' must not be only whitespace")
    return TournamentChat(ack, tournament_id, text)


def _create(f: FieldReader, ack: AckId | None) -> TournamentRequest:
    return TournamentCreate(
        ack,
        name=f.string("name", MAX_TOURNAMENT_NAME),
        format=f.choice("format", FORMAT_NAMES),
        variant=f.string("variant", MAX_NAME_LENGTH),
        control=f.time_control("tc"),
        rated=bool(f.boolean("rated", required=False)),
        start_at_ms=f.integer("start_at_ms", 0, MAX_EPOCH_MS, required=False),
        start_when_joined=f.integer("start_when_joined", 2, MAX_TOURNAMENT_PLAYERS, required=False),
        duration_s=f.integer("duration_s", 1, MAX_TOURNAMENT_DURATION_S, required=False),
        rounds=f.integer("rounds", 1, MAX_TOURNAMENT_ROUNDS, required=False),
        password=f.string("password", MAX_PASSWORD, required=False, secret=True),
        min_rating=f.integer("min_rating", 0, MAX_RATING, required=False),
        bots=f.boolean("bots", required=False) is not False,
        computer=bool(f.boolean("computer", required=False)),
        max_players=f.integer("max_players", 2, MAX_TOURNAMENT_PLAYERS, required=False),
        berserk=f.boolean("berserk", required=False) is not False,
    )


_TOURNAMENT_PARSERS: dict[str, Callable[[FieldReader, AckId | None], TournamentRequest]] = {
    "tournament_create": _create,
    "tournament_join": lambda f, a: TournamentJoin(
        a, _id(f), f.string("password", MAX_PASSWORD, required=False, secret=True)
    ),
    "tournament_withdraw": lambda f, a: TournamentWithdraw(a, _id(f)),
    "tournament_pause": lambda f, a: TournamentPause(
        a, _id(f), f.boolean("pause", required=False) is not False
    ),
    "tournament": lambda f, a: TournamentShow(a, _id(f), _page(f)),
    "tournament_watch": lambda f, a: TournamentWatch(a, _id(f), _page(f)),
    "tournament_page": lambda f, a: TournamentPage(a, _id(f), _page(f)),
    "tournament_unwatch": lambda f, a: TournamentUnwatch(a, _id(f)),
    "tournament_round": lambda f, a: TournamentRound(
        a,
        _id(f),
        f.integer("round", 1, MAX_ROUND),
        f.integer("page", 1, MAX_ROUND_PAGE, required=False) or 1,
    ),
    "tournament_list": lambda f, a: TournamentList(
        a, f.choice("status", STATUS_NAMES, required=False)
    ),
    "tournament_chat": _chat,
}

TOURNAMENT_REQUEST_TYPES: frozenset[str] = frozenset(_TOURNAMENT_PARSERS)
"""The frame types the tournament director answers."""


def tournament_request_of(envelope: Envelope) -> TournamentRequest:
    """Read a tournament frame out of a checked envelope (its type is one of
    :data:`TOURNAMENT_REQUEST_TYPES`).

    :raises ProtocolError: missing/extra/wrong-typed field, value out of range.
    """
    fields = FieldReader(envelope.kind, envelope.payload)
    request = _TOURNAMENT_PARSERS[envelope.kind](fields, envelope.ack)
    fields.done()
    return request


def tournament_request_schema(kind: str) -> tuple[FieldSpec, ...]:
    """The payload fields of the tournament frame ``kind`` (for ``scripts/gen_types.py``)."""
    return schema_of(kind, _TOURNAMENT_PARSERS[kind])

"""Server-to-client messages.

A :class:`Message` is the JSON object ``{"t": type, "d": payload, "v": version, "a": ack_id}`` as a
frozen record; ``v`` (room event version) and ``a`` (the acknowledged client ack id) are omitted from
the wire form when they are ``None``. Payloads are JSON-ready values (dicts, lists, str, int, bool,
None) and must be treated as read-only: a broadcast shares one payload between all recipients.
Each kind's payload has one schema, a ``TypedDict`` (of :mod:`server.hub.payloads`,
:mod:`server.hub.review_payloads` or :mod:`server.hub.tournament_payloads`), which the code
building it is annotated with; :data:`PAYLOADS` maps each kind to it, :data:`OWN_ANSWERS` and
:data:`OTHER_ANSWERS` say which message answers which command.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, NotRequired, TypedDict

from server.hub.errors import ErrorCode
from server.hub.payloads import (
    AckPayload,
    BackPayload,
    ChallengeAcceptedPayload,
    ChallengeEndedPayload,
    ChallengeView,
    ChatPayload,
    ComputerGamePayload,
    DegradedPayload,
    EmptyPayload,
    EndPayload,
    ErrorPayload,
    GameSnapshot,
    GameStartPayload,
    GonePayload,
    HelloPayload,
    IdPayload,
    MovePayload,
    OfferPayload,
    PremoveLinePayload,
    PremovesPayload,
    RematchPayload,
    RoomStateView,
    SeekView,
    SoughtPayload,
    TakebackPayload,
    WelcomePayload,
    WhoPayload,
)
from server.hub.review_payloads import (
    AnalysisView,
    ExportPayload,
    GameDetailView,
    GamesPayload,
    MailSettingsPayload,
    MyGamesPayload,
    MyGameView,
)
from server.hub.tournament_payloads import (
    BerserkPayload,
    TournamentChatPayload,
    TournamentPageView,
    TournamentRoundPayload,
    TournamentsPayload,
    TournamentStandingsPayload,
)

AckId = int | str
"""Client-chosen id echoed in the ``ack`` or ``error`` answering its command."""

Payload = Mapping[str, object]
"""A message's ``d``: read-only, one of the payload ``TypedDict`` (:data:`PAYLOADS`; every one is a
``Mapping[str, object]``). Which one depends on the value of ``t``, which a type cannot say, so
a reader of a ``Message`` it did not build narrows the fields it reads (``isinstance``); the
builders annotate the payload with its ``TypedDict``, which mypy checks."""


class MessageJson(TypedDict):
    """A message's wire form (:meth:`Message.to_json_obj`)."""

    t: str
    d: Payload
    v: NotRequired[int]
    a: NotRequired[AckId]


class MessageKind:
    """Every kind (``t``) of server-to-client message, listed once: docs/protocol.md's "Messages"
    table lists the same (``tests/test_vocabulary.py``), web/src/protocol.gen.ts is generated
    from it (``scripts/gen_types.py``).

    The kinds are plain ``str`` constants, not an enum: messages are encoded on the move path,
    and orjson writes an enum member about 0.5 µs slower per message than a ``str``
    (1.04 → 1.57 µs for a ``move``). :func:`message_kinds` lists them.
    """

    # answers to a command
    ACK: Final = "ack"
    ERROR: Final = "error"
    # session (transport, cluster)
    WELCOME: Final = "welcome"
    HELLO: Final = "hello"
    DEGRADED: Final = "degraded"
    PONG: Final = "pong"
    # lobby
    SOUGHT: Final = "sought"
    WHO: Final = "who"
    SEEK_ADDED: Final = "seek_added"
    SEEK_REMOVED: Final = "seek_removed"
    CHALLENGE: Final = "challenge"
    CHALLENGE_ACCEPTED: Final = "challenge_accepted"
    CHALLENGE_DECLINED: Final = "challenge_declined"
    CHALLENGE_WITHDRAWN: Final = "challenge_withdrawn"
    CHALLENGE_CANCELLED: Final = "challenge_cancelled"
    GAME_START: Final = "game_start"
    COMPUTER_GAME: Final = "computer_game"
    # room events (and the room snapshot ``game``)
    GAME: Final = "game"
    MOVE: Final = "move"
    TAKEBACK: Final = "takeback"
    OFFER: Final = "offer"
    END: Final = "end"
    GONE: Final = "gone"
    BACK: Final = "back"
    CHAT: Final = "chat"
    REMATCH: Final = "rematch"
    BERSERK: Final = "berserk"
    # a player's own conditional premoves (to that player only)
    PREMOVES: Final = "premoves"
    PREMOVE_LINE: Final = "premove_line"  # the answer to the read-only request of that name
    # review
    GAMES: Final = "games"
    MY_GAMES: Final = "my_games"
    MY_GAME: Final = "my_game"
    MAIL_SETTINGS: Final = "mail_settings"
    REVIEW: Final = "review"
    EXPORT: Final = "export"
    ANALYSE: Final = "analyse"
    ANALYSIS: Final = "analysis"
    # tournaments
    TOURNAMENT: Final = "tournament"
    TOURNAMENTS: Final = "tournaments"
    TOURNAMENT_STANDINGS: Final = "tournament_standings"
    TOURNAMENT_ROUND: Final = "tournament_round"
    TOURNAMENT_CHAT: Final = "tournament_chat"
    # bus publication only (channel ``games``), never sent to a client
    GAME_END: Final = "game_end"


def message_kinds() -> dict[str, str]:
    """Every message kind: attribute name -> wire spelling."""
    return {
        name: value
        for name, value in vars(MessageKind).items()
        if name.isupper() and isinstance(value, str)
    }


PAYLOADS: dict[str, object] = {  # TypedDict classes (typing has no type for one)
    MessageKind.ACK: AckPayload,
    MessageKind.ERROR: ErrorPayload,
    MessageKind.WELCOME: WelcomePayload,
    MessageKind.HELLO: HelloPayload,
    MessageKind.DEGRADED: DegradedPayload,
    MessageKind.PONG: EmptyPayload,
    MessageKind.SOUGHT: SoughtPayload,
    MessageKind.WHO: WhoPayload,
    MessageKind.SEEK_ADDED: SeekView,
    MessageKind.SEEK_REMOVED: IdPayload,
    MessageKind.CHALLENGE: ChallengeView,
    MessageKind.CHALLENGE_ACCEPTED: ChallengeAcceptedPayload,
    MessageKind.CHALLENGE_DECLINED: ChallengeEndedPayload,
    MessageKind.CHALLENGE_WITHDRAWN: IdPayload,
    MessageKind.CHALLENGE_CANCELLED: ChallengeEndedPayload,
    MessageKind.GAME_START: GameStartPayload,
    MessageKind.COMPUTER_GAME: ComputerGamePayload,
    MessageKind.GAME: GameSnapshot,
    MessageKind.MOVE: MovePayload,
    MessageKind.TAKEBACK: TakebackPayload,
    MessageKind.OFFER: OfferPayload,
    MessageKind.END: EndPayload,
    MessageKind.GONE: GonePayload,
    MessageKind.BACK: BackPayload,
    MessageKind.CHAT: ChatPayload,
    MessageKind.REMATCH: RematchPayload,
    MessageKind.PREMOVES: PremovesPayload,
    MessageKind.PREMOVE_LINE: PremoveLinePayload,
    MessageKind.GAMES: GamesPayload,
    MessageKind.MY_GAMES: MyGamesPayload,
    MessageKind.MY_GAME: MyGameView,
    MessageKind.MAIL_SETTINGS: MailSettingsPayload,
    MessageKind.REVIEW: GameDetailView,
    MessageKind.EXPORT: ExportPayload,
    MessageKind.ANALYSE: AnalysisView,
    MessageKind.ANALYSIS: AnalysisView,
    MessageKind.BERSERK: BerserkPayload,
    MessageKind.TOURNAMENT: TournamentPageView,
    MessageKind.TOURNAMENTS: TournamentsPayload,
    MessageKind.TOURNAMENT_STANDINGS: TournamentStandingsPayload,
    MessageKind.TOURNAMENT_ROUND: TournamentRoundPayload,
    MessageKind.TOURNAMENT_CHAT: TournamentChatPayload,
}
"""Every client-facing message kind's payload type (``game_end`` goes to the bus only, and the
bus's ``game_start`` has the shape of
:class:`server.hub.bus_notices.GameStartedNotice`)."""


OWN_ANSWERS = frozenset(
    {
        MessageKind.SOUGHT,
        MessageKind.WHO,
        MessageKind.PREMOVE_LINE,
        MessageKind.GAMES,
        MessageKind.MY_GAMES,
        MessageKind.MAIL_SETTINGS,
        MessageKind.REVIEW,
        MessageKind.EXPORT,
        MessageKind.ANALYSE,
        MessageKind.ANALYSIS,
        MessageKind.TOURNAMENT,
        MessageKind.TOURNAMENT_ROUND,
    }
)
"""The commands answered by a message of their own name rather than by ``ack`` (the login
frames are answered by ``welcome``, ``ping`` by ``pong``)."""

OTHER_ANSWERS: dict[str, str] = {
    "tournament_watch": MessageKind.TOURNAMENT,
    "tournament_list": MessageKind.TOURNAMENTS,
    "tournament_page": MessageKind.TOURNAMENT_STANDINGS,
}
"""The commands answered by a message of another name than theirs."""


@dataclass(frozen=True)
class Message:
    """One server-to-client message."""

    t: str
    d: Payload
    v: int | None = None
    a: AckId | None = None

    def to_json_obj(self) -> MessageJson:
        """Return the wire form, ready for ``json.dumps``.

        >>> Message("ack", {}, a=7).to_json_obj()
        {'t': 'ack', 'd': {}, 'a': 7}
        """
        obj: MessageJson = {"t": self.t, "d": self.d}
        if self.v is not None:
            obj["v"] = self.v
        if self.a is not None:
            obj["a"] = self.a
        return obj


def ack_message(ack: AckId | None, data: AckPayload | None = None) -> Message:
    """The positive answer to a command that carried ``ack``."""
    return Message(MessageKind.ACK, data or {}, a=ack)


def error_message(
    code: ErrorCode,
    text: str | None = None,
    ack: AckId | None = None,
    state: RoomStateView | None = None,
) -> Message:
    """The negative answer to a command: ``{"t": "error", "d": {"code", "message", "state"?}}``
    (``state``: the room's, after a refused or unsaved room command); ``text`` defaults to the
    code's own."""
    payload: ErrorPayload = {"code": code, "message": code.text if text is None else text}
    if state is not None:
        payload["state"] = state
    return Message(MessageKind.ERROR, payload, a=ack)

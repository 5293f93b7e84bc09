"""The payload (``d``) of the session, lobby and room messages and the parts every payload
shares, each defined once as a ``TypedDict``.

The code that builds a message annotates its payload with these types, so mypy checks that what
is sent has these keys and value types; ``scripts/gen_types.py`` writes the web client's
TypeScript types from them (``web/src/protocol.gen.ts``);
:func:`server.hub.payload_check.payload_problems` checks a payload received off the wire against
them (``tests/transport/test_transport_payloads.py``
plays a game and checks every frame, so a builder that drifts from its schema fails there even
where mypy cannot see it).

They are ``TypedDict`` and not dataclasses because a payload *is* the JSON object: building one
costs what building the dict costs, on the move path too.

The other messages' payloads are defined by topic, with the same conventions: the answers from
the store (review, analysis, a player's own games and mail settings) in
:mod:`server.hub.review_payloads`, the tournaments' in :mod:`server.hub.tournament_payloads`,
the bus's notices in :mod:`server.hub.bus_notices`; :data:`server.hub.messages.PAYLOADS` maps
every message kind to its payload type.

Shared parts are defined once and reused by name: a player (:class:`PlayerView`), a time control
(:data:`TimeControlView`), both clocks (:class:`ClocksView`); a played move's fields (``ply``,
``uci``, ``display``, ``spent_ms``) are :class:`MoveFields`, which the live ``move`` event and
the stored game's moves (:class:`server.hub.review_payloads.StoredMoveView`) both extend; the room's view of a game
(:class:`GameSnapshot`, the ``game`` snapshot) and its compact form sent with refusals
(:class:`RoomStateView`) share :class:`PositionFields`.
"""

from typing import Literal, NotRequired, TypedDict

from server.hub.errors import ErrorCode

SideName = Literal["first", "second"]
"""A side as the protocol spells it (``SIDE_NAMES``)."""

ColourName = Literal["first", "second", "random"]
"""A colour wish of a seek or challenge."""


# ----------------------------------------------------------------------- shared parts


class PlayerView(TypedDict):
    """A player as others see it; with a game's pool, its rating there (``None`` for guests)."""

    id: str
    name: str
    guest: bool
    computer: NotRequired[bool]
    bot: NotRequired[bool]
    rating: NotRequired[int | None]
    provisional: NotRequired[bool]


class FischerView(TypedDict):
    kind: Literal["fischer"]
    base_s: int
    inc_s: int


class ByoyomiView(TypedDict):
    kind: Literal["byoyomi"]
    main_s: int
    period_s: int
    periods: int


class CorrespondenceView(TypedDict):
    """Days per move (1, 2, 3, 5, 7, 10 or 14): the mover's time is the whole allowance again
    after each move."""

    kind: Literal["correspondence"]
    days: int


class UnlimitedView(TypedDict):
    """No clock (a correspondence game without deadlines)."""

    kind: Literal["unlimited"]


TimeControlView = FischerView | ByoyomiView | CorrespondenceView | UnlimitedView
"""A time control as commands take it and messages show it."""


class TournamentTagView(TypedDict):
    """The tournament a game belongs to (``id``), its round (an arena's wave) and whether its
    players may berserk."""

    id: str
    round: int
    berserk: bool


class TermsView(TypedDict):
    """What a game will be (``GameTerms.view``): shared by seeks, challenges and games;
    ``tournament`` only in a tournament's game."""

    variant: str
    tc: TimeControlView
    speed: str
    rated: bool
    tournament: NotRequired[TournamentTagView]


class SeekView(TermsView):
    id: int
    player: PlayerView
    colour: ColourName
    range: list[int] | None
    manual: bool


ChallengeView = TypedDict(
    "ChallengeView",
    {
        "variant": str,
        "tc": TimeControlView,
        "speed": str,
        "rated": bool,
        "id": int,
        "from": PlayerView,
        "to": PlayerView,
        "colour": ColourName,
        "seek": int | None,
        "tournament": NotRequired[TournamentTagView],
    },
)
"""A direct challenge (``from`` is a Python keyword, hence the functional form; its terms are
:class:`TermsView`'s fields)."""


class SideClockView(TypedDict):
    """One side's clock: ``periods``/``period_ms`` only under byoyomi."""

    ms: int
    periods: NotRequired[int]
    period_ms: NotRequired[int]


class ClocksView(TypedDict):
    first: SideClockView
    second: SideClockView
    running: SideName | None


class ChatLineView(TypedDict):
    """One chat line as the room keeps it (the ``chat`` event adds the game's id)."""

    room: Literal["players", "spectators"]
    user: str
    user_id: str
    text: str


class AbsenceView(TypedDict):
    claimable: bool
    claim_in_ms: int


class OffersView(TypedDict):
    """Which side has an open offer of each kind."""

    draw: SideName | None
    takeback: SideName | None
    rematch: SideName | None


class PositionFields(TypedDict):
    """The position after the last committed move, as every room view shows it."""

    game: str
    ply: int
    fen: str
    turn: SideName
    legal: list[str]
    clocks: ClocksView


class FirstMoveFields(TypedDict):
    """The first-move window (docs/protocol.md, "Aborting"): until both sides have moved, the
    side to move must make its first move within the hub's ``first_move_window_ms`` or the game
    is aborted. ``first_move_ms`` is what is left of that window for the side to move when the
    message was made (the whole window in a ``move`` or ``takeback`` event that arms it), or
    ``null``: no deadline (both sides have moved, the game is over, or the side to move is
    exempt)."""

    first_move_ms: int | None


class RoomStateView(PositionFields):
    """The compact state sent with a refusal (``error`` ``d.state``)."""

    v: int
    status: str


class GameSnapshot(PositionFields, FirstMoveFields, TermsView):
    """A room's full view of one game for one viewer: the ``game`` snapshot."""

    status: str
    role: SideName | Literal["spectator"]
    players: dict[SideName, PlayerView]
    start_fen: str
    moves: list[str]
    displays: list[str]
    draw_claim: bool
    result: str | None
    termination: str | None
    detail: str | None
    winner: SideName | None
    offers: OffersView
    absent: dict[SideName, AbsenceView | None]
    chat: list[ChatLineView]
    berserk: list[SideName]
    """The sides that berserked (a tournament game; empty in any other), so a reloaded page
    offers no second berserk."""


class MoveFields(TypedDict):
    """A played move as both the live event and the stored game show it."""

    ply: int
    uci: str
    display: str
    spent_ms: int | None


class PoolRatingView(TypedDict):
    rating: int
    provisional: bool


class WhoPlayerView(PlayerView):
    """One player of the ``who`` listing: its rating in each pool it played (``"minishogi"``,
    ``"chess/blitz"``) and the game it plays."""

    ratings: dict[str, PoolRatingView]
    game: str | None


# --------------------------------------------------------------------- session, lobby


class AckPayload(TypedDict, total=False):
    """What an ``ack`` carries: the fields the acknowledged command has a result for (``join``:
    the room's version ``v`` and whether a ``game`` snapshot was sent instead of the events
    after the client's version; a rematch agreed: ``new_game``)."""

    game: str
    ply: int
    v: int
    snapshot: bool
    new_game: str
    seek: int
    removed: list[int]
    challenge: int
    tournament: str
    id: int
    logged_out: bool
    sessions_ended: int
    """``change_password``: how many of the player's other sessions ended."""


class ErrorPayload(TypedDict):
    code: ErrorCode
    message: str
    state: NotRequired[RoomStateView]


class VariantName(TypedDict):
    name: str
    title: str
    family: str


class WelcomePayload(TypedDict):
    player: PlayerView
    token: str
    variants: list[VariantName]


class HelloPayload(TypedDict):
    player: PlayerView
    game: str | None
    """The player's running real-time game (one at most)."""
    correspondence: list[str]
    """The player's running correspondence games (any number), by id."""
    seeks: list[SeekView]
    challenges: list[ChallengeView]


class DegradedPayload(TypedDict):
    on: bool


class EmptyPayload(TypedDict):
    pass


class SoughtPayload(TypedDict):
    seeks: list[SeekView]
    watching: bool


class WhoPayload(TypedDict):
    players: list[WhoPlayerView]


class IdPayload(TypedDict):
    """A seek or challenge gone (``seek_removed``, ``challenge_withdrawn``)."""

    id: int


class ChallengeAcceptedPayload(TypedDict):
    id: int
    game: str


class ChallengeEndedPayload(TypedDict):
    """A challenge declined (``reason`` the decliner's, may be ``None``) or cancelled."""

    id: int
    reason: str | None


ChallengeOverPayload = IdPayload | ChallengeAcceptedPayload | ChallengeEndedPayload
"""The payload of any message that ends a challenge (accepted, declined, withdrawn, cancelled)."""


class GameStartPayload(TypedDict):
    game: str
    side: SideName
    opponent: PlayerView
    tournament: NotRequired[TournamentTagView]


class ComputerGamePayload(TypedDict):
    game: str
    level: int


# ------------------------------------------------------------------------ room events


class RoomEventFields(TypedDict):
    """Every room event carries its game's id."""

    game: str


class MovePayload(MoveFields, PositionFields, FirstMoveFields):
    side: SideName
    check: bool
    draw_claim: bool


class TakebackPayload(PositionFields, FirstMoveFields):
    removed: int
    draw_claim: bool


class OfferPayload(RoomEventFields):
    kind: Literal["draw", "takeback", "rematch"]
    action: Literal["offer", "accept", "decline", "cancel"]
    side: SideName


class EndPayload(RoomEventFields):
    result: str | None
    winner: SideName | None
    termination: str
    clocks: ClocksView
    detail: NotRequired[str]


class GonePayload(RoomEventFields):
    """A player left (``claim_in_ms`` until its opponent may claim) or, later, may be claimed."""

    side: SideName
    claimable: bool
    claim_in_ms: NotRequired[int]


class BackPayload(RoomEventFields):
    side: SideName


class ChatPayload(ChatLineView, RoomEventFields):
    pass


class RematchPayload(RoomEventFields):
    new_game: str


class PremovesPayload(TypedDict):
    """A player's conditional premoves in ``game`` (docs/correspondence.md), sent to that player
    only: ``lines`` each alternate the opponent's move and the player's reply, starting from the
    position after ``ply`` moves (the opponent to move); ``[]``: none."""

    game: str
    ply: int
    lines: list[list[str]]


class PremoveLinePayload(TypedDict):
    """The answer to ``premove_line``: the position after ``moves`` are played from the current
    position of ``game`` (after ``ply`` moves), drawn as a room's (``fen``, ``turn``, ``legal``:
    empty when the game would be over there, ``result`` then saying how; ``check``: the side to
    move is in check). ``moves`` are in the engine's spelling (as stored lines keep them),
    ``displays`` as people read them."""

    game: str
    ply: int
    moves: list[str]
    displays: list[str]
    fen: str
    turn: SideName
    legal: list[str]
    check: bool
    result: str | None

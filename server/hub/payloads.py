"""The payload (``d``) of every server-to-client message, defined once as a ``TypedDict``.

The code that builds a message annotates its payload with these types, so mypy checks that what
is sent has these keys and value types; ``scripts/gen_types.py`` writes the web client's
TypeScript types from them (``web/src/protocol.gen.ts``);
:func:`server.hub.payload_check.payload_problems` checks a payload received off the wire against
them (``tests/transport/test_transport_payloads.py``
plays a game and checks every frame, so a builder that drifts from its schema fails there even
where mypy cannot see it).

They are ``TypedDict`` and not dataclasses because a payload *is* the JSON object: building one
costs what building the dict costs, on the move path too.

Shared parts are defined once and reused by name: a player (:class:`PlayerView`), a time control
(:data:`TimeControlView`), both clocks (:class:`ClocksView`); a played move's fields (``ply``,
``uci``, ``display``, ``spent_ms``) are :class:`MoveFields`, which the live ``move`` event and
the stored game's moves (:class:`StoredMoveView`) both extend; the room's view of a game
(:class:`GameSnapshot`, the ``game`` snapshot) and its compact form sent with refusals
(:class:`RoomStateView`) share :class:`PositionFields`.
"""

from typing import Literal, NotRequired, TypedDict

from server.hub.errors import ErrorCode
from server.hub.messages import MessageKind
from server.rules.analysis import (  # the analysis views, defined where they are built
    AdviceView,
    AnalysisLimitsView,
    PlyEvalView,
    ScoreView,  # noqa: F401 - a part of PlyEvalView, written to the TypeScript types too
    SideSummaryView,
)

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


# ---------------------------------------------------------------------------- review


class StoredTimeControlView(TypedDict):
    """The review API's ``time_control``: the ``games`` table's clock fields, ``days`` under a
    correspondence control, and the PGN text."""

    kind: str
    base_ms: int
    increment_ms: int
    byoyomi_ms: int
    periods: int
    days: NotRequired[int]
    text: str


class StoredPlayerView(TypedDict):
    """A player of a stored game: its store id is a number (``None`` for a guest), not the
    hub's player id."""

    name: str
    id: int | None
    rating_before: int | None
    rating_after: int | None
    bot: NotRequired[bool]
    """Present (true) for a bot account (the Bot API), as in :class:`PlayerView`."""


class StoredTournamentView(TypedDict):
    """A stored game's tournament: its id, the round (an arena's wave), who berserked."""

    id: str
    round: int
    berserk: list[SideName]


class GameSummaryView(TypedDict):
    """A stored game as the game lists show it (``tournament``: a tournament's game only)."""

    id: str
    variant: str
    status: str
    result: str | None
    termination: str | None
    rated: bool
    speed: str
    time_control: StoredTimeControlView
    first: StoredPlayerView
    second: StoredPlayerView
    plies: int | None
    start_fen: str
    final_fen: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None
    tournament: NotRequired[StoredTournamentView]


class StoredMoveView(MoveFields):
    """A stored move: the played move's fields and what the record keeps of the clock."""

    clock_ms: int | None
    periods_left: int | None
    at: str | None


class StoredPositionView(TypedDict):
    ply: int
    fen: str
    turn: SideName
    move: str | None
    check: bool
    sfen: NotRequired[str]


class GameDetailView(GameSummaryView):
    """One stored game with its moves (``review``; ``GET /api/game/{id}``)."""

    headers: dict[str, str]
    formats: list[str]
    moves: list[StoredMoveView]
    position: NotRequired[StoredPositionView]


class GamesPayload(TypedDict):
    games: list[GameSummaryView]
    limit: int
    offset: int
    next_offset: int | None
    next_cursor: str | None


class MyGameView(TermsView):
    """One game of a player's own "your turn" list (``my_games``, ``my_game``): a running game
    of theirs, correspondence or real-time, as the store (or the hub running it) knows it."""

    game: str
    opponent: str
    side: SideName
    """The player's own side."""
    turn: SideName
    """Whose move it is (after ``plies`` moves the first player's when ``plies`` is even)."""
    your_turn: bool
    """The player is to move (never once the game is over)."""
    plies: int
    finished: bool
    """Only in a pushed ``my_game``: the game ended (the list drops it)."""
    result: str | None


class MyGamesPayload(TypedDict):
    """The answer to ``my_games``: the player's running games, those where it is their move
    first (the oldest turn first), then the others (newest first)."""

    games: list[MyGameView]
    your_turn: int
    """How many of ``games`` wait for the player's move (the header's count)."""
    limit: int
    """The most games listed (the rest are left off; ``your_turn`` counts them all)."""


class MailSettingsPayload(TypedDict):
    """A registered player's e-mail notification settings (``mail_settings``; the address is
    the player's own, shown only to them)."""

    email: str | None
    opt_in: bool
    """Mail when it is their turn in a correspondence game or one ended (docs/correspondence.md)."""
    enabled: bool
    """Whether this server sends mail at all (``[mail] enabled``)."""


class ExportPayload(TypedDict):
    game: str
    format: str
    content_type: str
    text: str


class AnalysisProgress(TypedDict):
    done: int
    total: int


class ShownPlyEvalView(PlyEvalView):
    """An analysed position as the analysis view shows it: the engine's best move and line
    also in the variant's notation, as the move list writes moves (``best_display`` null
    without a best move; ``pv_display`` at most 12 moves, cut at a move that is not legal)."""

    best_display: str | None
    pv_display: list[str]


class ShownAdviceView(AdviceView):
    """A judged move as the analysis view shows it: the best move also in the variant's
    notation (null when the engine gave none)."""

    best_display: str | None


class AnalysisView(TypedDict):
    """A game's computer analysis (``analyse``, ``analysis``; the HTTP API's analysis view)."""

    game: str
    state: Literal["queued", "running", "done", "failed"]
    requested_by: str | None
    limits: AnalysisLimitsView
    progress: AnalysisProgress
    estimate_s: int
    plies: list[ShownPlyEvalView]
    advice: list[ShownAdviceView]
    summary: dict[SideName, SideSummaryView]
    error: NotRequired[str]


# ------------------------------------------------------------------------ tournaments


class BerserkPayload(RoomEventFields):
    """``berserk`` (room event): ``side`` halved its clock (a tournament game)."""

    side: SideName
    clocks: ClocksView


TournamentFormat = Literal["arena", "swiss", "round_robin", "double_round_robin"]
TournamentStatusName = Literal["created", "started", "finished"]


class TournamentSettingsView(TypedDict):
    """A tournament's settings as shown (``password``: whether one is needed; times in epoch
    milliseconds)."""

    name: str
    format: TournamentFormat
    variant: str
    tc: TimeControlView
    rated: bool
    start_at_ms: int | None
    start_when_joined: int | None
    duration_ms: int | None
    rounds: int | None
    password: bool
    min_rating: int | None
    bots: bool
    computer: bool
    max_players: int
    berserk: bool


class TournamentSummaryView(TypedDict):
    """One tournament in a listing (``tournaments``)."""

    id: str
    status: TournamentStatusName
    created_by: str | None
    settings: TournamentSettingsView


class TournamentStandingView(TypedDict):
    """One standings row: ``score`` in the format's unit (arena points; chess points), the
    named tie-breaks, the arena's ``fire`` (two wins in a row), ``berserks`` (games berserked)
    and ``sheet`` (each game's arena points)."""

    rank: int
    player: str
    name: str
    rating: int
    score: float
    games: int
    status: Literal["active", "paused", "withdrawn"]
    tiebreaks: dict[str, float]
    fire: bool
    berserks: int
    sheet: list[int]


class TournamentPairingView(TypedDict):
    """A game of the tournament (``result`` null while it is played; the players' names as
    entered: the view's standings are one page)."""

    game: str
    round: int
    white: str
    black: str
    white_name: str
    black_name: str
    result: str | None
    white_berserk: bool
    black_berserk: bool


class TournamentByeView(TypedDict):
    player: str
    name: str
    round: int
    points: float


class TournamentStandingsPayload(TypedDict):
    """``tournament_standings``: one page of the standings (``server.hub.tournament.pages``:
    10 rows, ``page`` of ``pages``, ``players`` in all), pushed to the watchers of that page
    when it changed, and the answer to ``tournament_page``. ``playing``: the games being
    played by the page's players."""

    id: str
    status: TournamentStatusName
    round: int
    page: int
    pages: int
    players: int
    standings: list[TournamentStandingView]
    playing: list[str]


class TournamentView(TournamentSummaryView):
    """``tournament``: the view, its size bounded whatever the number of rounds and players
    (``server.hub.tournament.rounds``). ``countdown_ms``: the next moment that matters (the
    start, an arena's end; null otherwise). ``pairings``: at most 30 games — a Swiss's or a
    round robin's current round in board order, an arena's games being played, the best placed
    players' first (the leader's game first) —, of ``pairings_total``; ``byes``: the current
    round's; ``playing``: which of ``pairings`` are being played, ``playing_count``: how many
    games are being played in all. Earlier rounds: ``tournament_round``."""

    countdown_ms: int | None
    round: int
    standings: list[TournamentStandingView]
    pairings: list[TournamentPairingView]
    pairings_total: int
    byes: list[TournamentByeView]
    playing: list[str]
    playing_count: int
    podium: list[TournamentStandingView]


class TournamentsPayload(TypedDict):
    """``tournaments``: the answer to ``tournament_list``."""

    tournaments: list[TournamentSummaryView]


class TournamentPageView(TournamentView):
    """``tournament``, as the websocket sends it: the view with one page of the standings
    (``standings``: the page's rows; ``page`` of ``pages``, ``players`` in all, as in
    ``tournament_standings``) and ``me``: the connection's own row (null when not entered or
    not logged in), wherever it stands."""

    page: int
    pages: int
    players: int
    me: TournamentStandingView | None
    mine: list[TournamentPairingView]
    """The connection's own games in this tournament, the newest last (at most 30)."""


class TournamentRoundPayload(TypedDict):
    """``tournament_round``: the answer to ``tournament_round``, one page of a round's
    pairings (an arena's wave) in pairing order (50 a page: ``page`` of ``pages``, ``total``
    games in the round), the round's byes, and which of the page's games are being played."""

    id: str
    round: int
    rounds: int
    page: int
    pages: int
    total: int
    pairings: list[TournamentPairingView]
    byes: list[TournamentByeView]
    playing: list[str]


# ------------------------------------------------------------------------ the table

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
}
"""Every client-facing message kind's payload type (``game_end`` goes to the bus only, and the
bus's ``game_start`` has the shape of :class:`GameStartedNotice`)."""


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


class GameStartedNotice(TermsView):
    """The bus publication of a new game (channel ``games``; docs/protocol.md)."""

    game: str
    players: list[PlayerView]


class GameEndNotice(TypedDict):
    """The bus publication of a finished game (``game_end``, channel ``games``)."""

    game: str
    result: str | None
    termination: str

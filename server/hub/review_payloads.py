"""The payloads of the answers from the store rather than from a room, each a ``TypedDict`` (the
conventions of :mod:`server.hub.payloads`): the review commands' (``games``, ``review``,
``export``: stored games, their moves and exports; ``analyse``, ``analysis``: a game's computer
analysis) and the account commands' (``my_games`` and the pushed ``my_game``: a player's running
games; ``mail_settings``).

A stored game's parts have names of their own (:class:`StoredPlayerView`,
:class:`StoredTimeControlView`, ...): the store keeps them in its own terms (a player's store
id, the clock in milliseconds), not as a room shows them.
"""

from typing import Literal, NotRequired, TypedDict

from server.hub.payloads import MoveFields, SideName, TermsView
from server.rules.analysis import (  # the analysis views, defined where they are built
    AdviceView,
    AnalysisLimitsView,
    PlyEvalView,
    ScoreView,  # noqa: F401 - a part of PlyEvalView, written to the TypeScript types too
    SideSummaryView,
)


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

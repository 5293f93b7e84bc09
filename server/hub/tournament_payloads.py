"""The payloads of the tournament messages, each a ``TypedDict`` (the conventions of
:mod:`server.hub.payloads`): a tournament's view and listing (``tournament``, ``tournaments``),
its standings pages (``tournament_standings``), a round's pairings (``tournament_round``), its
chat (``tournament_chat``), and the room event ``berserk`` of a tournament game.

The views are built by the tournament core (``server.hub.tournament.views``,
``server.hub.tournament.pages``); a game's tag (:class:`server.hub.payloads.TournamentTagView`)
is a part of every game's terms and stays with them.
"""

from typing import Literal, TypedDict

from server.hub.payloads import ClocksView, RoomEventFields, SideName, TimeControlView


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


class TournamentChatLineView(TypedDict):
    """One line of a tournament's chat: who wrote it (``user``: the name), what, and when
    (``at``: epoch milliseconds)."""

    user: str
    text: str
    at: int


class TournamentChatPayload(TypedDict):
    """``tournament_chat``: lines of the tournament's chat, oldest first — its last 50 right
    after the ``tournament`` view answering a ``tournament_watch`` (possibly none), then each
    new line, one a message, to every watcher of the tournament. Not part of the view."""

    id: str
    lines: list[TournamentChatLineView]

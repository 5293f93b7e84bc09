"""Effects: what the hub asks its adapters to do, as plain frozen records, in order.

The adapter runs the effects of one call in the order given:

* :class:`Send` — one message to one connection.
* :class:`Broadcast` — one message to several connections; encode it once.
* :class:`Persist` — write a record to the store, then report the outcome with
  ``Hub.persisted(token, now)`` or ``Hub.persist_failed(token, reason, now)``. Until then the hub
  holds what depends on it (a move's ack and its broadcast, a new game's start, a game's end).
* :class:`Publish` — publish a message on a bus channel (other hub processes, services).
* :class:`Close` — close a connection.
* :class:`TurnChanged` — a correspondence game's turn passed or it ended (for the notifier:
  e-mail; the players' own connections are sent ``my_game`` by the hub itself).
* :class:`OfferStored` / :class:`OfferDropped` — a stored seek or challenge (a registered
  player's correspondence one) was made / is gone: the adapter keeps the store in step, then
  reports ``Hub.offer_written(token, now)`` (or ``Hub.offer_failed(token, reason, now)``); the
  hub holds the answer of the command that made or withdrew it until then
  (docs/correspondence.md, "Seeks and challenges").
* :class:`GamesWanted` — a command would start a correspondence game with the absent owner of a
  stored seek or challenge: the adapter reads that player's running correspondence games from
  the store and runs the command again with them (``Hub.handle(..., games=...)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from server.hub.commands import Command
from server.hub.identity import PlayerId, PlayerInfo
from server.hub.lobby import Challenge, Seek, TournamentTag
from server.hub.messages import Message
from server.rules import MoveRecord, Side
from server.rules.time_control import TimeControl

ConnId = int
"""A connection id chosen by the transport adapter."""

GameId = str


@dataclass(frozen=True)
class Send:
    conn_id: ConnId
    message: Message


@dataclass(frozen=True)
class Broadcast:
    """``message`` to every connection in ``conn_ids`` (already resolved by the hub).

    ``topic`` names the audience for logging and metrics: ``game:<id>``, ``game:<id>:players``,
    ``game:<id>:spectators``, ``lobby``.
    """

    topic: str
    message: Message
    conn_ids: tuple[ConnId, ...]


@dataclass(frozen=True)
class Publish:
    """``message`` on bus channel ``channel`` (``lobby``, ``games``, ``game:<id>``)."""

    channel: str
    message: Message


@dataclass(frozen=True)
class Close:
    conn_id: ConnId
    reason: str


# --- persistence records -------------------------------------------------------------------------


@dataclass(frozen=True)
class GamePlayer:
    """A player as stored with a game: id, name, whether a guest."""

    player_id: PlayerId
    name: str
    guest: bool


@dataclass(frozen=True)
class GameCreated:
    """A new game row. ``first`` moves first. ``start_fen`` is the actual start position."""

    game_id: GameId
    variant: str
    start_fen: str
    control: TimeControl
    rated: bool
    first: GamePlayer
    second: GamePlayer
    tournament: TournamentTag | None = None
    """The tournament and round the game belongs to (stored with the game)."""
    consumed_offers: tuple[str, ...] = ()
    """The keys of the stored seeks and challenges the game answers (``Seek.key``,
    ``Challenge.key``): their rows are deleted in the game row's transaction (no
    ``OfferDropped`` is emitted for them); if the row is not written they are open again."""


@dataclass(frozen=True)
class MoveAppended:
    """Move ``move.ply`` of game ``game_id``; ``move.played_at`` is None (the store stamps it)."""

    game_id: GameId
    move: MoveRecord


@dataclass(frozen=True)
class MovesRetracted:
    """A takeback: delete the moves with ``ply >= from_ply``."""

    game_id: GameId
    from_ply: int


@dataclass(frozen=True)
class GameFinished:
    """The end of a game.

    ``result`` is ``"1-0"`` (first player wins), ``"0-1"``, ``"1/2-1/2"`` or ``None`` for an aborted
    game. ``termination`` is a :class:`server.rules.Termination` (the engine's endings and the
    server's: resignation, time, agreement, abort, abandonment). When
    ``rated`` is true and ``result`` is not ``None``, the store applies Glicko-2 to both players and
    then reports the new ratings with ``Hub.set_rating``.
    """

    game_id: GameId
    variant: str
    rated: bool
    first_id: PlayerId
    second_id: PlayerId
    result: str | None
    termination: str
    plies: int
    final_fen: str
    ended_ms: int
    server_decided: bool = False
    """True when the server decided the end (time, first-move timeout, an engine outcome after
    a stored move): the hub never takes it back and announces it only once stored, so the
    adapter must write it until it commits, keeping it across a crash of its own meanwhile.
    False when a player's command ended the game: a failed write is reported
    (``Hub.persist_failed``) and the game goes on."""
    tournament: TournamentTag | None = None
    """The tournament of the game: its stored end is reported to the tournament's director."""
    berserk: tuple[bool, bool] = (False, False)
    """Whether the first / second player berserked (tournament games)."""


@dataclass(frozen=True)
class BerserkMarked:
    """A tournament game's berserk: who has berserked so far (the row's ``berserk``), stored
    before the halved clock applies, so that a game resumed after a restart keeps it."""

    game_id: GameId
    first: bool
    second: bool


@dataclass(frozen=True)
class PremovesSet:
    """A player's conditional premoves in a correspondence game (docs/correspondence.md),
    replacing what was stored for that player (``side``): ``lines`` (each the opponent's move,
    the player's reply, …) start from the position after ``from_ply`` moves; ``()`` deletes
    them. Also what :meth:`~server.hub.hub.Hub.restore_game` is given back."""

    game_id: GameId
    side: Side
    from_ply: int
    lines: tuple[tuple[str, ...], ...]


PersistRecord = (
    GameCreated | MoveAppended | MovesRetracted | GameFinished | BerserkMarked | PremovesSet
)


@dataclass(frozen=True)
class Persist:
    """Write ``record``; then call ``Hub.persisted(token, now)`` or ``Hub.persist_failed(...)``."""

    token: int
    record: PersistRecord


@dataclass(frozen=True, slots=True)
class TurnChanged:
    """A correspondence game (speed ``correspondence``) started, had a move stored, or ended:
    whoever is to move now may be told (docs/correspondence.md, "Notifications").

    Emitted after the write committed, once per change, by the hub that runs the game; the
    adapter hands it to the notifier, never to a player. ``to_move`` is the player whose turn
    it is, ``None`` once the game is over (``result`` then set, ``None`` for an abort)."""

    game_id: GameId
    variant: str
    players: tuple[PlayerId, PlayerId]
    names: tuple[str, str]
    to_move: PlayerId | None
    plies: int
    finished: bool
    result: str | None


@dataclass(frozen=True, slots=True)
class OfferStored:
    """A stored seek or challenge was made (its ``key`` is set): write it, so that it outlives
    its player's connection and the process; then report ``Hub.offer_written(token, now)``, or
    ``Hub.offer_failed(token, reason, now)`` if nothing was written (the hub then drops the
    offer). The command that made it is answered only after the write committed."""

    offer: Seek | Challenge
    token: int


@dataclass(frozen=True, slots=True)
class OfferDropped:
    """The stored seek or challenge ``key`` is gone (declined, withdrawn, cancelled; answered
    by a game only while its own insert is unreported, else the game's row takes it along,
    ``GameCreated.consumed_offers``): delete it, after the writes of offers asked for before
    (it may be the delete of an offer whose insert is still on its way), retrying until it is
    done (a delete is idempotent: an answered offer must not come back after a restart); then
    report ``Hub.offer_written(token, now)``. The command that withdrew it (``unseek``,
    ``withdraw``, ``decline``) is answered only then."""

    key: str
    token: int


@dataclass(frozen=True, slots=True)
class GamesWanted:
    """``command`` of ``conn_id`` would start a correspondence game with ``player``, the owner
    of a stored seek or challenge, whose running correspondence games the hub does not know:
    the player has no connection here, so the store's list of them was never read (the hub
    asks only when :attr:`~server.hub.hub_state.HubConfig.ask_owner_games` is set). Nothing
    has changed. Read the player's running correspondence games from the store, then run the
    command again: ``Hub.handle(conn_id, command, now, lag_ms=lag_ms, games=games)``, with
    ``games`` = ``known`` and the player's list (the count checked against
    ``max_correspondence_games``; docs/correspondence.md, "Seeks and challenges")."""

    conn_id: ConnId
    command: Command
    lag_ms: int
    player: PlayerInfo
    known: Mapping[PlayerId, frozenset[GameId]]


Effect = (
    Send
    | Broadcast
    | Persist
    | Publish
    | Close
    | TurnChanged
    | OfferStored
    | OfferDropped
    | GamesWanted
)

"""A tournament's state folded from its events, and the decisions taken on commands.

:class:`TournamentState` is the running fold of the :data:`~.values.Event` tuple: the adapter
keeps one per live tournament and calls :meth:`TournamentState.apply` for each event it stores;
after a restart :func:`replay` rebuilds the same state from the stored rows. The ``decide_*``
functions take a command and answer with the event to store or a :class:`Refusal` (nothing to
store): the door shows the refusal, the store appends the event and the state applies it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from server.hub.errors import ErrorCode
from server.hub.identity import PlayerId
from server.hub.tournament.values import (
    Bye,
    Ended,
    EntryStatus,
    Event,
    Finished,
    Joined,
    Paired,
    Paused,
    Resumed,
    Started,
    TournamentGame,
    TournamentSettings,
    Withdrew,
)

__all__ = [
    "Entry",
    "Phase",
    "Refusal",
    "TournamentState",
    "arena_ends_at",
    "decide_join",
    "decide_pause",
    "decide_withdraw",
    "replay",
    "should_start",
]

Phase = Literal["created", "started", "finished"]

@dataclass(frozen=True)
class Refusal:
    """A command that changes nothing, and why (the code every door shows)."""

    reason: ErrorCode


@dataclass(frozen=True)
class Entry:
    """A player's entry: name and rating when they (last) joined, status, and the order of
    joining (``seq``, 0 for the first joiner; a rejoin keeps the first number)."""

    player: PlayerId
    name: str
    rating: int
    status: EntryStatus
    seq: int
    bot: bool = False
    joined_round: int = 0
    """The number of rounds already paired when the player (first) joined (a late entry)."""


@dataclass
class TournamentState:
    """The fold of a tournament's events (see the module docstring).

    ``games`` maps a game id to its :class:`~.values.Paired`; ``results`` maps the finished
    ones to their :class:`~.values.TournamentGame`, in the order they finished. ``byes`` lists the
    :class:`~.values.Bye` events. ``rounds_paired``: the highest round with a pairing or a bye.
    """

    phase: Phase = "created"
    started_at_ms: int | None = None
    entries: dict[PlayerId, Entry] = field(default_factory=dict)
    games: dict[str, Paired] = field(default_factory=dict)
    results: dict[str, TournamentGame] = field(default_factory=dict)
    byes: list[Bye] = field(default_factory=list)
    rounds_paired: int = 0
    playing: dict[PlayerId, str] = field(default_factory=dict)
    """The players in a game now: player → game id."""
    last_opponent: dict[PlayerId, PlayerId] = field(default_factory=dict)
    version: int = 0
    """Events applied so far: what a cache of answers computed from this state is keyed by
    (:class:`~server.hub.tournament.board.TournamentBoard`)."""

    def apply(self, event: Event) -> None:
        """Fold one more event in. Events are facts already decided: applying one never fails
        (an event about an unknown game or player is ignored)."""
        self.version += 1
        match event:
            case Joined():
                old = self.entries.get(event.player)
                seq = old.seq if old else len(self.entries)
                joined_round = old.joined_round if old else self.rounds_paired
                self.entries[event.player] = Entry(
                    event.player, event.name, event.rating, "active", seq, event.bot, joined_round
                )
            case Withdrew():
                self._set_status(event.player, "withdrawn")
            case Paused():
                self._set_status(event.player, "paused")
            case Resumed():
                self._set_status(event.player, "active")
            case Started():
                self.phase = "started"
                self.started_at_ms = event.at_ms
            case Ended():
                self.phase = "finished"
            case Paired():
                self.games[event.game_id] = event
                self.rounds_paired = max(self.rounds_paired, event.round)
                self.playing[event.white] = event.game_id
                self.playing[event.black] = event.game_id
            case Bye():
                self.byes.append(event)
                self.rounds_paired = max(self.rounds_paired, event.round)
            case Finished():
                paired = self.games.get(event.game_id)
                if paired is None or event.game_id in self.results:
                    return
                self.results[event.game_id] = event.result
                for player in (paired.white, paired.black):
                    if self.playing.get(player) == event.game_id:
                        del self.playing[player]
                self.last_opponent[paired.white] = paired.black
                self.last_opponent[paired.black] = paired.white

    def _set_status(self, player: PlayerId, status: EntryStatus) -> None:
        entry = self.entries.get(player)
        if entry is not None:
            self.entries[player] = replace(entry, status=status)

    def active(self) -> list[Entry]:
        """Entries that may be paired (neither paused nor withdrawn), in joining order."""
        return sorted(
            (e for e in self.entries.values() if e.status == "active"), key=lambda e: e.seq
        )

    def finished_games(self) -> list[tuple[Paired, TournamentGame]]:
        """Finished games in the order they finished, each with its pairing."""
        return [(self.games[gid], res) for gid, res in self.results.items()]


def replay(events: Iterable[Event]) -> TournamentState:
    """The state after ``events`` (in order), from nothing."""
    state = TournamentState()
    for event in events:
        state.apply(event)
    return state


def decide_join(
    settings: TournamentSettings,
    state: TournamentState,
    player: PlayerId,
    name: str,
    rating: int,
    now_ms: int,
    *,
    bot: bool = False,
    computer: bool = False,
    password_ok: bool = False,
) -> Joined | Refusal:
    """A player asks to join: the :class:`~.values.Joined` to store, or why not.

    ``rating`` is the player's rating in the tournament's pool; ``password_ok`` says whether the
    door verified the given password against ``settings.password_hash`` (ignored without one).
    A withdrawn player may join again (arena and Swiss; a round robin's table is fixed at the
    start, so only before it).
    """
    entry = state.entries.get(player)
    if state.phase == "finished":
        return Refusal(ErrorCode.TOURNAMENT_FINISHED)
    if entry is not None and entry.status != "withdrawn":
        return Refusal(ErrorCode.ALREADY_ENTERED)
    if state.phase == "started" and settings.format in ("round_robin", "double_round_robin"):
        return Refusal(ErrorCode.TOURNAMENT_FINISHED)
    if settings.password_hash is not None and not password_ok:
        return Refusal(ErrorCode.WRONG_TOURNAMENT_PASSWORD)
    if computer and not settings.computer:
        return Refusal(ErrorCode.COMPUTER_NOT_ALLOWED)
    if bot and not settings.bots:
        return Refusal(ErrorCode.BOTS_NOT_ALLOWED)
    if settings.min_rating is not None and rating < settings.min_rating and not computer:
        return Refusal(ErrorCode.RATING_TOO_LOW)
    if entry is None and len(state.entries) >= settings.max_players:
        return Refusal(ErrorCode.TOURNAMENT_FULL)
    return Joined(player, name, rating, now_ms, bot=bot or computer)


def decide_withdraw(state: TournamentState, player: PlayerId, now_ms: int) -> Withdrew | Refusal:
    """A player asks to leave (only their own entry: the door passes the caller's id)."""
    entry = state.entries.get(player)
    if entry is None or entry.status == "withdrawn":
        return Refusal(ErrorCode.NOT_ENTERED)
    if state.phase == "finished":
        return Refusal(ErrorCode.TOURNAMENT_FINISHED)
    return Withdrew(player, now_ms)


def decide_pause(
    settings: TournamentSettings, state: TournamentState, player: PlayerId, now_ms: int, *, pause: bool
) -> Paused | Resumed | Refusal:
    """Pause (``pause=True``) or resume an arena entry."""
    if settings.format != "arena":
        return Refusal(ErrorCode.NOT_ARENA)
    entry = state.entries.get(player)
    if entry is None or entry.status == "withdrawn":
        return Refusal(ErrorCode.NOT_ENTERED)
    if state.phase == "finished":
        return Refusal(ErrorCode.TOURNAMENT_FINISHED)
    if pause:
        return Refusal(ErrorCode.ALREADY_PAUSED) if entry.status == "paused" else Paused(player, now_ms)
    return Resumed(player, now_ms) if entry.status == "paused" else Refusal(ErrorCode.NOT_PAUSED)


def should_start(settings: TournamentSettings, state: TournamentState, now_ms: int) -> bool:
    """Whether a created tournament starts now: its time has come, or enough players joined
    (at least two entries are needed in any case)."""
    if state.phase != "created" or len(state.active()) < 2:
        return False
    if settings.start_at_ms is not None and now_ms >= settings.start_at_ms:
        return True
    wanted = settings.start_when_joined
    return wanted is not None and len(state.active()) >= wanted


def arena_ends_at(settings: TournamentSettings, state: TournamentState) -> int | None:
    """When a started arena ends (its start plus its duration); ``None`` otherwise."""
    if settings.format != "arena" or state.started_at_ms is None or settings.duration_ms is None:
        return None
    return state.started_at_ms + settings.duration_ms

"""A stored game as the arguments of :meth:`server.hub.hub.Hub.restore_game`.

Used when a node takes over a game whose owner died, and for any other resumption from the
store, like the restart recovery of ``server.app``. Registered players get back their hub id
(``u<store id>``) and their ratings; a guest's hub id is not stored (nor is the guest's session,
which lived in the dead process), so a restored guest gets a new id: the guest cannot play on,
and the opponent may claim the game once the absence countdown runs out. The computer (no
player id, its reserved name) comes back as the computer; a bot account comes back marked as a
bot (``GameRecord.first_bot``/``second_bot``: the account's flag, read by the query that loads
the games — ``Store.load_unfinished_games`` for a restart, ``Store.get_game`` for a takeover —
so a resumed game's header shows it before the bot reconnects).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime

from server.hub.effects import PremovesSet
from server.hub.identity import COMPUTER, PlayerInfo, Rating, RatingKey
from server.hub.lobby import GameTerms, TournamentTag
from server.rules import MoveRecord
from server.rules.time_control import is_correspondence
from server.store import GameRecord, Store
from server.transport.accounts import guest_player_id, registered_player_id

__all__ = ["Resumable", "kept_cold", "resumable_game", "version_above_all_issued"]


@dataclass(frozen=True)
class Resumable:
    """Everything :meth:`Hub.restore_game` needs, except the current time."""

    game_id: str
    terms: GameTerms
    players: tuple[PlayerInfo, PlayerInfo]
    start_fen: str
    moves: tuple[MoveRecord, ...]
    first_version: int
    """The version ``v`` of the resumed room's first event (see :func:`resumable_game`)."""
    turn_started_at: datetime | None = None
    """A correspondence game's: when the side to move's turn started (the last stored move's
    instant, or the game's start); ``None`` for a real-time game (its turn starts afresh)."""
    berserk: tuple[bool, bool] = (False, False)
    """Who berserked (a tournament game's stored ``berserk``): their clocks stay halved."""
    premoves: tuple[PremovesSet, ...] = ()
    """A correspondence game's conditional premoves as stored (``Store.premoves_of``)."""


async def _player(store: Store, store_id: int | None, name: str, bot: bool) -> PlayerInfo:
    if store_id is None and name == COMPUTER.name:
        return COMPUTER  # a reserved name: only the computer plays under it
    if store_id is None:
        return PlayerInfo(guest_player_id(), name, True)
    ratings = await store.player_ratings(store_id)
    pools: dict[RatingKey, Rating] = {(r.variant, r.speed): r.rating for r in ratings}
    return PlayerInfo(registered_player_id(store_id), name, False, pools, bot=bot)


def kept_cold(game: GameRecord) -> bool:
    """Whether ``game`` is one a hub keeps out of memory while nobody uses it: a
    correspondence game between two registered players, neither a bot (the store's
    ``load_unfinished_games(correspondence=False)`` and ``unfinished_games`` leave the same
    out; ``Hub.unload`` drops only such rooms). docs/correspondence.md "Memory"."""
    return (
        is_correspondence(game.time_control)
        and game.first_player_id is not None
        and game.second_player_id is not None
        and not (game.first_bot or game.second_bot)
    )


def version_above_all_issued() -> int:
    """A room version above every one a hub can have issued: the wall clock in ms (a room's
    versions start at 1, or at such a number, and no room issues events faster than 1 per ms)."""
    return int(time.time() * 1000) + 1


async def resumable_game(store: Store, game: GameRecord) -> Resumable:
    """The restore arguments of ``game`` (its moves as stored).

    The room's versions continue the old room's sequence without a gap when the hub that ran
    it stopped gracefully and kept its last version (``Store.take_room_version``, which clears
    it); otherwise (a crash, a dead node) nobody knows the last version issued, so they jump
    above any that can have been issued, and a client that joins with an older version gets a
    snapshot — never a replay of other events under the same numbers.

    :raises StoreUnavailableError: the database is unreachable.
    """
    # Three independent reads at once (on PostgreSQL three pooled connections): a cold
    # correspondence game is loaded while its first command waits (docs/correspondence.md).
    first, second, kept = await asyncio.gather(
        _player(store, game.first_player_id, game.first_name, game.first_bot),
        _player(store, game.second_player_id, game.second_name, game.second_bot),
        store.take_room_version(game.id),
    )
    tag = None
    if game.tournament_id is not None and game.tournament_round is not None:
        # Whether the tournament allows berserk is not stored; a stored berserk says it does.
        # (A player who had not berserked before the restart and has not moved yet may then.)
        allowed = game.first_berserk or game.second_berserk
        tag = TournamentTag(game.tournament_id, game.tournament_round, berserk=allowed)
    terms = GameTerms(game.variant, game.time_control, game.rated, tag)
    first_version = version_above_all_issued() if kept is None else kept + 1
    turn_started_at = None
    premoves: tuple[PremovesSet, ...] = ()
    if is_correspondence(game.time_control):
        last = game.moves[-1].played_at if game.moves else None
        turn_started_at = last or game.started_at or game.created_at
        premoves = tuple(await store.premoves_of(game.id))
    return Resumable(
        game.id,
        terms,
        (first, second),
        game.start_fen,
        game.moves,
        first_version,
        turn_started_at,
        (game.first_berserk, game.second_berserk),
        premoves,
    )

"""Narrow exceptions raised by the store.

Malformed arguments (a result that is not ``"1-0"``, ``"0-1"`` or
``"1/2-1/2"``, an empty name, ...) raise :class:`ValueError` before anything
touches the database; everything the database itself refuses or cannot do
raises a subclass of :class:`StoreError`.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of the store's own errors."""


class StoreUnavailableError(StoreError):
    """The database could not be reached or dropped the connection.

    Nothing was committed by the failing call (a commit that fails half-way is
    rolled back by the database). Retrying later is safe for idempotent calls;
    an append that raised this may be retried with the same ply.
    """


class DuplicateMoveError(StoreError):
    """A move with this (game, ply) is already stored: another writer got there first."""

    def __init__(self, game_id: str, ply: int) -> None:
        super().__init__(f"game {game_id} already has a move at ply {ply}")
        self.game_id = game_id
        self.ply = ply


class NameTakenError(StoreError):
    """A player with this name (compared case-insensitively) already exists."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the name {name!r} is already taken")
        self.name = name


class UnknownPlayerError(StoreError):
    """No player has this id."""


class UnknownGameError(StoreError):
    """No game has this id."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"no game with id {game_id!r}")
        self.game_id = game_id


class GameStateError(StoreError):
    """The game exists but is not in a state that allows the requested change
    (for example finishing a game that is already finished)."""

    def __init__(self, game_id: str, status: str, action: str) -> None:
        super().__init__(f"cannot {action} game {game_id}: it is {status}")
        self.game_id = game_id
        self.status = status


class UnknownTournamentError(StoreError):
    """No tournament has this id."""

    def __init__(self, tournament_id: str) -> None:
        super().__init__(f"no tournament with id {tournament_id!r}")
        self.tournament_id = tournament_id


class TournamentConflictError(StoreError):
    """An append expected the tournament to hold ``expected`` events, but it holds another
    number (another writer appended first, or a racing append took the same numbers): nothing
    was stored. The caller reloads the tournament and decides again."""

    def __init__(self, tournament_id: str, expected: int) -> None:
        super().__init__(f"tournament {tournament_id} does not hold {expected} events: reload it")
        self.tournament_id = tournament_id
        self.expected = expected


class OfferNotHeldError(StoreError):
    """A game answering stored offers (``create_game(consumed_offers=…)``) found some of their
    rows no longer held by its process: claimed by another cluster node (``offers.node``), or
    deleted. Nothing was stored: neither the game nor any offer's delete. ``keys``: those
    offers, in the order given."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        super().__init__(f"stored offers no longer held here: {', '.join(keys)}")
        self.keys = keys

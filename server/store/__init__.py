"""Storage adapter: players, sessions, ratings, games and moves in PostgreSQL or SQLite.

The pieces the rest of the server uses:

* :class:`Store` (``server.store.repository``): every query, one transaction per call;
* :class:`MoveWriter` (``server.store.writer``): group commit for moves;
* :class:`EndJournal` (``server.store.journal``): server-decided game ends kept on the local
  disk until the database has them;
* ``upgrade_to_head`` / ``downgrade_to_base`` in ``server.store.migrate`` (not re-exported
  here, so that ``python -m server.store.migrate`` runs cleanly);
* the records passed in and out (``server.store.records``) and the narrow
  errors (``server.store.errors``).
"""

from server.store.engine import DEFAULT_URL, create_engine
from server.store.errors import (
    DuplicateMoveError,
    GameStateError,
    NameTakenError,
    StoreError,
    StoreUnavailableError,
    UnknownGameError,
    UnknownPlayerError,
)
from server.store.journal import EndJournal
from server.store.records import (
    ClockKind,
    ClockState,
    GameInfo,
    GameMove,
    GamePage,
    GameStatus,
    Player,
    PlayerRating,
    RatingUpdate,
    ResultCode,
    StoredGame,
    TimeControl,
)
from server.store.repository import Store, new_game_id
from server.store.writer import MoveWriter, WriterStats

__all__ = [
    "DEFAULT_URL",
    "ClockKind",
    "ClockState",
    "DuplicateMoveError",
    "EndJournal",
    "GameInfo",
    "GameMove",
    "GamePage",
    "GameStateError",
    "GameStatus",
    "MoveWriter",
    "NameTakenError",
    "Player",
    "PlayerRating",
    "RatingUpdate",
    "ResultCode",
    "Store",
    "StoreError",
    "StoreUnavailableError",
    "StoredGame",
    "TimeControl",
    "UnknownGameError",
    "UnknownPlayerError",
    "WriterStats",
    "create_engine",
    "new_game_id",
]

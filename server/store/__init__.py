"""Storage adapter: players, sessions, ratings, games and moves in PostgreSQL or SQLite.

The pieces the rest of the server uses:

* :class:`Store` (``server.store.repository``): every query, one transaction per call;
* :class:`MoveWriter` (``server.store.writer``): group commit for moves;
* :class:`EndJournal` (``server.store.journal``): server-decided game ends kept on the local
  disk until the database has them;
* ``upgrade_to_head`` / ``downgrade_to_base`` in ``server.store.migrate`` (not re-exported
  here, so that ``python -m server.store.migrate`` runs cleanly);
* the tournaments' records (``server.store.tournaments``) and their one codec
  (``server.store.tournament_codec``);
* the records passed in and out: the game records shared by every layer
  (``server.rules.record``, re-exported here; their time control is
  ``server.rules.time_control``'s) and the store's own (``server.store.records``),
  and the narrow errors (``server.store.errors``).
"""

from server.rules.record import (
    GameInfo,
    GamePage,
    GameRecord,
    GameStatus,
    ResultCode,
)
from server.store.analyses import AnalysisExistsError, UnknownAnalysisError
from server.store.engine import DEFAULT_URL, create_engine
from server.store.errors import (
    DuplicateMoveError,
    GameStateError,
    NameTakenError,
    OfferNotHeldError,
    StoreError,
    StoreUnavailableError,
    TournamentConflictError,
    UnknownGameError,
    UnknownPlayerError,
    UnknownTournamentError,
)
from server.store.journal import JOURNAL_FORMAT, EndJournal, end_entry, end_from_entry
from server.store.offers import StoredOffer, StoredOfferPlayer, node_of
from server.store.records import (
    ApiToken,
    GameMove,
    Player,
    PlayerRating,
    RatingUpdate,
)
from server.store.repository import Store, new_game_id
from server.store.tokens import TOKEN_PREFIX, TooManyTokensError
from server.store.tournament_codec import TOURNAMENT_LAYOUT
from server.store.tournaments import StoredTournament, TournamentInfo, TournamentStatus
from server.store.writer import MoveWriter, WriterStats

__all__ = [
    "DEFAULT_URL",
    "JOURNAL_FORMAT",
    "TOKEN_PREFIX",
    "TOURNAMENT_LAYOUT",
    "AnalysisExistsError",
    "ApiToken",
    "DuplicateMoveError",
    "EndJournal",
    "GameInfo",
    "GameMove",
    "GamePage",
    "GameRecord",
    "GameStateError",
    "GameStatus",
    "MoveWriter",
    "NameTakenError",
    "OfferNotHeldError",
    "Player",
    "PlayerRating",
    "RatingUpdate",
    "ResultCode",
    "Store",
    "StoreError",
    "StoreUnavailableError",
    "StoredOffer",
    "StoredOfferPlayer",
    "StoredTournament",
    "TooManyTokensError",
    "TournamentConflictError",
    "TournamentInfo",
    "TournamentStatus",
    "UnknownAnalysisError",
    "UnknownGameError",
    "UnknownPlayerError",
    "UnknownTournamentError",
    "WriterStats",
    "create_engine",
    "end_entry",
    "end_from_entry",
    "new_game_id",
    "node_of",
]

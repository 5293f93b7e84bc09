"""The shared variant adjudicator: pure Python, no I/O.

>>> from server.rules import Game, get_variant
>>> game = Game(get_variant("minishogi"))
>>> game.play("e1e4").display
'Rx1b'
>>> game.legal_moves()
['d5e4', 'e5e4']
"""

from .chess_family import has_mating_material
from .errors import IllegalMoveError, InvalidFenError, InvalidMoveError, RulesError
from .game import (
    ENGINE_TERMINATIONS,
    SIDE_NAMES,
    SIDES,
    Game,
    Outcome,
    PlayedMove,
    Side,
    Termination,
    decide_outcome,
)
from .geometry import Geometry
from .position import Move, Position
from .record import MoveList, MoveRecord
from .variant import (
    Castling,
    Drops,
    MoveRule,
    PieceType,
    Promotion,
    Repetition,
    RoyalModel,
    Variant,
)
from .variants import VARIANT_NAMES, VARIANTS, get_variant

__all__ = [
    "ENGINE_TERMINATIONS",
    "SIDES",
    "SIDE_NAMES",
    "VARIANTS",
    "VARIANT_NAMES",
    "Castling",
    "Drops",
    "Game",
    "Geometry",
    "IllegalMoveError",
    "InvalidFenError",
    "InvalidMoveError",
    "Move",
    "MoveList",
    "MoveRecord",
    "MoveRule",
    "Outcome",
    "PieceType",
    "PlayedMove",
    "Position",
    "Promotion",
    "Repetition",
    "RoyalModel",
    "RulesError",
    "Side",
    "Termination",
    "Variant",
    "decide_outcome",
    "get_variant",
    "has_mating_material",
]

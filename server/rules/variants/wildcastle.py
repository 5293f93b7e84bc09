"""Wild Castle (ICS wild/1 shuffle chess), spec §3: data only.

The start position is drawn by the spec's default ``seed`` generator (36 setups, Black
mirrors White); :data:`~server.rules.chess_family.ICS_SETUPS` is the FICS alternative. The
standard chess array is one of the 36 and serves as ``start_fen``.
"""

from ..chess_family import SEED_SETUPS, wildcastle_dead_position
from ..geometry import Geometry
from ..variant import Castling, MoveRule, PieceType, Promotion, Repetition, RoyalModel, Variant

WILDCASTLE = Variant(
    name="wildcastle",
    title="Wild Castle",
    family="chess",
    geometry=Geometry(8, 8),
    pieces=(
        PieceType("K", "King", "K", royal=True),
        PieceType("Q", "Queen", "Q"),
        PieceType("R", "Rook", "R"),
        PieceType("B", "Bishop", "B"),
        PieceType("N", "Knight", "N"),
        PieceType("P", "Pawn", "mfWcfFimfnD"),
    ),
    start_fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    royalty=(RoyalModel.CHECKMATE, RoyalModel.CHECKMATE),
    stalemate_loses=False,
    repetition=Repetition(automatic=5, claim=3),
    promotion=Promotion(zone=1, style="chess", choices=(("P", ("Q", "R", "B", "N")),)),
    castling=Castling(king_files="de"),
    en_passant=("P",),
    move_rule=MoveRule(claim=50, automatic=75, reset_by=("P",)),
    draw_offers=True,
    notation="san",
    dead_position=wildcastle_dead_position,
    start_fen_generator=SEED_SETUPS,
)

"""Spartan Chess (Steven Streetman, 2010), spec §4: data only.

Persians (first player) have the FIDE army under model M1; Spartans (second player) have two
Kings under model M3 (duple check), hoplites that promote (to a second King only while they
have one), and never castle. No en passant for anyone.
"""

from ..chess_family import spartan_dead_position
from ..geometry import Geometry
from ..variant import Castling, MoveRule, PieceType, Promotion, Repetition, RoyalModel, Variant

SPARTAN = Variant(
    name="spartan",
    title="Spartan Chess",
    family="chess",
    geometry=Geometry(8, 8),
    pieces=(
        PieceType("K", "King", "K", royal=True),
        PieceType("Q", "Queen", "Q"),
        PieceType("R", "Rook", "R"),
        PieceType("B", "Bishop", "B"),
        PieceType("N", "Knight", "N"),
        PieceType("P", "Pawn", "mfWcfFimfnD"),
        PieceType("W", "Warlord", "BN"),
        PieceType("G", "General", "RF"),
        PieceType("L", "Lieutenant", "FAsmW"),
        PieceType("C", "Captain", "WD"),
        PieceType("H", "Hoplite", "fmFfcWimA"),
    ),
    start_fen="lgkcckwl/hhhhhhhh/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1",
    royalty=(RoyalModel.CHECKMATE, RoyalModel.DUPLE_CHECK),
    stalemate_loses=False,
    repetition=Repetition(automatic=5, claim=3),
    promotion=Promotion(
        zone=1,
        style="chess",
        choices=(("P", ("Q", "R", "B", "N")), ("H", ("K", "W", "G", "L", "C"))),
        limits=(("K", 2),),
    ),
    castling=Castling(sides=(0,), king_files="e"),
    en_passant=(),
    move_rule=MoveRule(claim=50, automatic=75, reset_by=("P", "H")),
    draw_offers=True,
    notation="san",
    dead_position=spartan_dead_position,
)

"""Mini-Shogi (5×5 Gogo shōgi), spec §1: data only."""

from ..geometry import Geometry
from ..variant import Drops, PieceType, Promotion, Repetition, RoyalModel, Variant

MINISHOGI = Variant(
    name="minishogi",
    title="Mini-Shogi",
    family="shogi",
    geometry=Geometry(5, 5),
    pieces=(
        PieceType("K", "King", "K", royal=True),
        PieceType("R", "Rook", "R", promotes_to="+R"),
        PieceType("B", "Bishop", "B", promotes_to="+B"),
        PieceType("G", "Gold", "WfF"),
        PieceType("S", "Silver", "FfW", promotes_to="+S"),
        PieceType("P", "Pawn", "fW", promotes_to="+P"),
        PieceType("+R", "Dragon", "RF"),
        PieceType("+B", "Horse", "BW"),
        PieceType("+S", "Promoted silver", "WfF"),
        PieceType("+P", "Tokin", "WfF"),
    ),
    start_fen="rbsgk/4p/5/P4/KGSBR[] w - - 0 1",
    royalty=(RoyalModel.CHECKMATE, RoyalModel.CHECKMATE),
    stalemate_loses=True,
    repetition=Repetition(automatic=4, perpetual_check_loses=True, first_player_loses=True),
    promotion=Promotion(zone=1),
    drops=Drops(one_per_file=("P",), no_drop_mate=("P",)),
    notation="shogi",
    hand_in_fen=True,
)

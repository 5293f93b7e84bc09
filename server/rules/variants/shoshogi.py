"""Sho Shogi (9×9, no drops, Drunk Elephant → Crown Prince), spec §2: data only."""

from ..geometry import Geometry
from ..variant import PieceType, Promotion, Repetition, RoyalModel, Variant

SHOSHOGI = Variant(
    name="shoshogi",
    title="Sho Shogi",
    family="shogi",
    geometry=Geometry(9, 9),
    pieces=(
        PieceType("K", "King", "K", royal=True),
        PieceType("R", "Rook", "R", promotes_to="+R"),
        PieceType("B", "Bishop", "B", promotes_to="+B"),
        PieceType("E", "Drunk Elephant", "FsfW", promotes_to="+E"),
        PieceType("G", "Gold", "WfF"),
        PieceType("S", "Silver", "FfW", promotes_to="+S"),
        PieceType("N", "Knight", "ffN", promotes_to="+N"),
        PieceType("L", "Lance", "fR", promotes_to="+L"),
        PieceType("P", "Pawn", "fW", promotes_to="+P"),
        PieceType("+R", "Dragon", "RF"),
        PieceType("+B", "Horse", "BW"),
        PieceType("+E", "Crown Prince", "K", royal=True),
        PieceType("+S", "Promoted silver", "WfF"),
        PieceType("+N", "Promoted knight", "WfF"),
        PieceType("+L", "Promoted lance", "WfF"),
        PieceType("+P", "Tokin", "WfF"),
    ),
    start_fen="lnsgkgsnl/1r2e2b1/ppppppppp/9/9/9/PPPPPPPPP/1B2E2R1/LNSGKGSNL w - - 0 1",
    royalty=(RoyalModel.PSEUDO_ROYAL, RoyalModel.PSEUDO_ROYAL),
    stalemate_loses=True,
    repetition=Repetition(automatic=4, perpetual_check_loses=True),
    promotion=Promotion(zone=3),
    notation="shogi",
)

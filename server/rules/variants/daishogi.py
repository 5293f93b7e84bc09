"""Dai Shogi (15×15, 29 piece types, Lion power, royal capture), spec §5: data only.

Symbols are HaChu's FEN letters (spec §5.2 legend), so the HaChu start string reads as is;
``abbrev`` is the Dai.rul display abbreviation (§5.3), ``+`` and the original abbreviation
for a promoted piece. Lion power (§5.4) is the :mod:`server.rules.lion` hook, driven by
``PieceType.lion``; the single-leg Lion moves are Betza atoms (``KNAD`` for the Lion, ``fWfD``
for the Horned Falcon, ``fFfA`` for the Soaring Eagle).
"""

from .. import lion
from ..geometry import Geometry
from ..variant import PieceType, Promotion, Repetition, RoyalModel, Variant

__all__ = ["DAISHOGI", "DAI_START_FEN"]

ALL_DIRECTIONS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
FORWARD = ((0, 1),)
FORWARD_DIAGONALS = ((-1, 1), (1, 1))

GOLD = "WfF"
DRUNK_ELEPHANT = "FsfW"

DAI_START_FEN = (
    "lnuicsgkgsciunl/a1c'1f1tet1f1c'1a/1x'1a'1wxl!ow1a'1x'1/rf'mvbhdqdhbvmf'r/ppppppppppppppp/"
    "4p'5p'4/15/15/15/4P'5P'4/PPPPPPPPPPPPPPP/RF'MVBHDQDHBVMF'R/1X'1A'1WOL!XW1A'1X'1/"
    "A1C'1F1TET1F1C'1A/LNUICSGKGSCIUNL w - - 0 1"
)


def _promoted(
    symbol: str,
    name: str,
    betza: str,
    abbrev: str,
    royal: bool = False,
    lion: tuple[tuple[int, int], ...] | None = None,
) -> PieceType:
    """The promoted form of ``symbol``/``abbrev``: written ``+`` and the original in both."""
    return PieceType("+" + symbol, name, betza, royal=royal, abbrev="+" + abbrev, lion=lion)


DAISHOGI = Variant(
    name="daishogi",
    title="Dai Shogi",
    family="shogi",
    geometry=Geometry(15, 15),
    pieces=(
        PieceType("K", "King", "K", royal=True, abbrev="K"),
        PieceType("E", "Drunk Elephant", DRUNK_ELEPHANT, promotes_to="+E", abbrev="DE"),
        PieceType("Q", "Free King", "Q", abbrev="FK"),
        PieceType("L!", "Lion", "KNAD", abbrev="Ln", lion=ALL_DIRECTIONS),
        PieceType("D", "Dragon King", "RF", promotes_to="+D", abbrev="DK"),
        PieceType("H", "Dragon Horse", "BW", promotes_to="+H", abbrev="DH"),
        PieceType("R", "Rook", "R", promotes_to="+R", abbrev="R"),
        PieceType("B", "Bishop", "B", promotes_to="+B", abbrev="B"),
        PieceType("V", "Vertical Mover", "vRsW", promotes_to="+V", abbrev="VM"),
        PieceType("M", "Side Mover", "sRvW", promotes_to="+M", abbrev="SM"),
        PieceType("A", "Reverse Chariot", "vR", promotes_to="+A", abbrev="RC"),
        PieceType("L", "Lance", "fR", promotes_to="+L", abbrev="L"),
        PieceType("T", "Blind Tiger", "FsbW", promotes_to="+T", abbrev="BT"),
        PieceType("F", "Ferocious Leopard", "FvW", promotes_to="+F", abbrev="FL"),
        PieceType("G", "Gold General", GOLD, promotes_to="+G", abbrev="G"),
        PieceType("S", "Silver General", "FfW", promotes_to="+S", abbrev="S"),
        PieceType("C", "Copper General", "vWfF", promotes_to="+C", abbrev="C"),
        PieceType("I", "Iron General", "fWfF", promotes_to="+I", abbrev="I"),
        PieceType("U", "Stone General", "fF", promotes_to="+U", abbrev="SG"),
        PieceType("N", "Knight", "ffN", promotes_to="+N", abbrev="N"),
        PieceType("O", "Kirin", "FD", promotes_to="+O", abbrev="Kr"),
        PieceType("X", "Phoenix", "WA", promotes_to="+X", abbrev="Ph"),
        PieceType("X'", "Violent Ox", "W2", promotes_to="+X'", abbrev="VO"),
        PieceType("F'", "Flying Dragon", "F2", promotes_to="+F'", abbrev="FD"),
        PieceType("W", "Evil Wolf", "fsWfF", promotes_to="+W", abbrev="EW"),
        PieceType("A'", "Angry Boar", "W", promotes_to="+A'", abbrev="AB"),
        PieceType("C'", "Cat Sword", "F", promotes_to="+C'", abbrev="CS"),
        PieceType("P'", "Go-Between", "vW", promotes_to="+P'", abbrev="GB"),
        PieceType("P", "Pawn", "fW", promotes_to="+P", abbrev="P"),
        # Promoted-only types (§5.3): named after what they move as.
        _promoted("E", "Crown Prince", "K", "DE", royal=True),
        _promoted("D", "Soaring Eagle", "RbBfFfA", "DK", lion=FORWARD_DIAGONALS),
        _promoted("H", "Horned Falcon", "BsbRfWfD", "DH", lion=FORWARD),
        _promoted("R", "Dragon King", "RF", "R"),
        _promoted("B", "Dragon Horse", "BW", "B"),
        _promoted("V", "Flying Ox", "BvR", "VM"),
        _promoted("M", "Free Boar", "BsR", "SM"),
        _promoted("A", "Whale", "vRbB", "RC"),
        _promoted("L", "White Horse", "vRfB", "L"),
        _promoted("T", "Flying Stag", "FsWvR", "BT"),
        _promoted("F", "Bishop", "B", "FL"),
        _promoted("G", "Rook", "R", "G"),
        _promoted("S", "Vertical Mover", "vRsW", "S"),
        _promoted("C", "Side Mover", "sRvW", "C"),
        _promoted("I", "Gold General", GOLD, "I"),
        _promoted("U", "Gold General", GOLD, "SG"),
        _promoted("N", "Gold General", GOLD, "N"),
        _promoted("O", "Lion", "KNAD", "Kr", lion=ALL_DIRECTIONS),
        _promoted("X", "Free King", "Q", "Ph"),
        _promoted("X'", "Gold General", GOLD, "VO"),
        _promoted("F'", "Gold General", GOLD, "FD"),
        _promoted("W", "Gold General", GOLD, "EW"),
        _promoted("A'", "Gold General", GOLD, "AB"),
        _promoted("C'", "Gold General", GOLD, "CS"),
        # A promoted Go-Between moves as a Drunk Elephant but is not royal and never promotes.
        _promoted("P'", "Drunk Elephant", DRUNK_ELEPHANT, "GB"),
        _promoted("P", "Gold General", GOLD, "P"),
    ),
    start_fen=DAI_START_FEN,
    royalty=(RoyalModel.ROYAL_CAPTURE, RoyalModel.ROYAL_CAPTURE),
    stalemate_loses=True,
    repetition=Repetition(automatic=4, perpetual_check_loses=True),
    promotion=Promotion(zone=5),
    notation="dai",
    special_moves=lion.special_moves,
)

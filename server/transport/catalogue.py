"""``GET /api/variants``: the variant catalogue the web client draws pieces and diagrams from.

Read-only and computed once from :mod:`server.rules` (the adjudicator stays the only source of
the rules): per variant its board size, family and rule switches the client shows buttons for,
and per piece type its FEN symbol, name, kanji, promotion and its moves as Betza atoms (first
player's orientation), from which the client draws the move diagram shown on hover.
"""

from __future__ import annotations

from typing import TypedDict

from server.rules import VARIANTS, Variant
from server.rules.betza import parse
from server.rules.export import (
    DAI_KANJI,
    DAI_PROMOTED_KANJI,
    SHOGI_BOARD_KANJI,
    SHOGI_KANJI,
)
from server.rules.variant import PieceType

__all__ = ["CATALOGUE_PATH", "catalogue"]

CATALOGUE_PATH = "/api/variants"


class AtomView(TypedDict):
    """One direction of a piece's movement (:class:`server.rules.betza.Atom`)."""

    dx: int
    dy: int
    min: int
    max: int
    jump: bool
    move: bool
    capture: bool
    initial: bool


class PieceView(TypedDict):
    symbol: str
    name: str
    abbrev: str
    kanji: str | None
    betza: str
    royal: bool
    promoted: bool
    promotes_to: str | None
    atoms: list[AtomView]
    lion: list[list[int]] | None


class PromotionView(TypedDict):
    zone: int
    style: str


class VariantView(TypedDict):
    """One variant of the catalogue: its board, rules and pieces."""

    name: str
    title: str
    family: str
    files: int
    ranks: int
    start_fen: str
    drops: bool
    draw_offers: bool
    draw_claims: bool
    byoyomi: bool
    promotion: PromotionView | None
    pieces: list[PieceView]


class CatalogueView(TypedDict):
    variants: list[VariantView]


def _kanji(variant: Variant, piece: PieceType) -> str | None:
    """What a traditional piece shows: one character on 5×5/9×9, two on Dai Shogi.

    A promoted Dai Shogi piece bears the name of what it moves as (a promoted Kirin reads 獅子),
    unless its promoted form has a name of its own (飛鷲 …).
    """
    if variant.family != "shogi":
        return None
    if variant.notation != "dai":
        return SHOGI_BOARD_KANJI.get(piece.name) or SHOGI_KANJI.get(piece.name)
    if piece.is_promoted and piece.name in DAI_PROMOTED_KANJI:
        return DAI_PROMOTED_KANJI[piece.name]
    return DAI_KANJI.get(piece.name)


def _piece(variant: Variant, piece: PieceType) -> PieceView:
    return {
        "symbol": piece.symbol,
        "name": piece.name,
        "abbrev": piece.display,
        "kanji": _kanji(variant, piece),
        "betza": piece.betza,
        "royal": piece.royal,
        "promoted": piece.is_promoted,
        "promotes_to": piece.promotes_to,
        "atoms": [
            {
                "dx": a.dx,
                "dy": a.dy,
                "min": a.min_range,
                "max": a.max_range,
                "jump": a.jump,
                "move": a.can_move,
                "capture": a.can_capture,
                "initial": a.initial,
            }
            for a in parse(piece.betza)
        ],
        "lion": [list(d) for d in piece.lion] if piece.lion else None,
    }


def _variant(variant: Variant) -> VariantView:
    promotion = variant.promotion
    return {
        "name": variant.name,
        "title": variant.title,
        "family": variant.family,
        "files": variant.geometry.files,
        "ranks": variant.geometry.ranks,
        "start_fen": variant.start_fen,
        "drops": variant.drops is not None,
        "draw_offers": variant.draw_offers,
        "draw_claims": variant.repetition.claim is not None or variant.move_rule is not None,
        "byoyomi": variant.family == "shogi",
        "promotion": None
        if promotion is None
        else {"zone": promotion.zone, "style": promotion.style},
        "pieces": [_piece(variant, p) for p in variant.pieces],
    }


def catalogue() -> CatalogueView:
    """The whole catalogue as one JSON-ready object (``{"variants": [...]}``)."""
    return {"variants": [_variant(v) for v in VARIANTS.values()]}

"""Helpers shared by the per-variant rule tests: build games from FENs and ask about moves."""

from __future__ import annotations

import pytest

from server.rules import Game, IllegalMoveError, Variant


class RuleHelpers:
    """Shortcuts bound to one variant."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant

    def game(self, fen: str) -> Game:
        return Game(self.variant, fen)

    def moves_from(self, fen: str, square: str) -> set[str]:
        """The legal moves of the piece on ``square`` (wire form, promotion suffix kept)."""
        return {m for m in self.game(fen).legal_moves() if m.startswith(square)}

    def targets(self, fen: str, square: str) -> set[str]:
        """The squares the piece on ``square`` can reach (promotion suffix dropped)."""
        return {m[2:4] for m in self.moves_from(fen, square)}

    def illegal_reason(self, fen: str, move: str) -> str:
        with pytest.raises(IllegalMoveError) as err:
            self.game(fen).play(move)
        return str(err.value)


def play_all(g: Game, moves: list[str]) -> None:
    for m in moves:
        assert g.outcome() is None, f"the game ended before {m}"
        g.play(m)

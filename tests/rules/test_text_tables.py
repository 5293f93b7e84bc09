"""The text tables of the move path: the legal moves by their coordinate text (a move played
as text is looked up, not parsed and checked) and the FEN's rank texts kept per variant."""

from __future__ import annotations

import random

import pytest

from server.rules import (
    VARIANTS,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Position,
    get_variant,
)
from server.rules import fen as fen_module
from server.rules.uci import PASS


def positions_of_random_games(name: str, games: int, plies: int, seed: int) -> list[Game]:
    """Games stopped at every ply of a few random games (copies: each is replayed)."""
    rng = random.Random(seed)
    variant = get_variant(name)
    out = []
    for _ in range(games):
        moves: list[str] = []
        game = Game(variant)
        while game.ply < plies and game.legal_moves():
            moves.append(rng.choice(game.legal_moves()))
            game.play(moves[-1])
            out.append(game)
            game = Game(variant)
            for move in moves:
                game.play(move)
    return out


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_table_holds_every_legal_move_by_its_text(name: str) -> None:
    plies = 12 if name == "daishogi" else 40
    for game in positions_of_random_games(name, 3, plies, seed=41):
        pos = game.position
        legal = game.legal_moves()
        table = pos.legal_by_text()
        assert sorted(table) == [text for text in legal if text != PASS]
        for text, move in table.items():
            assert pos.uci(move) == text
            assert pos.move_from_uci(text) == move  # what the parser and the check would find


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_move_played_by_text_is_the_move_the_parser_finds(name: str) -> None:
    rng = random.Random(42)
    plies = 12 if name == "daishogi" else 40
    by_table, by_parser = Game(get_variant(name)), Game(get_variant(name))
    while by_table.ply < plies and by_table.legal_moves():
        text = rng.choice(by_table.legal_moves())
        played = by_table.play(text)
        expected = by_parser.push(by_parser.position.move_from_uci(text))
        assert played == expected
        assert by_table.fen() == by_parser.fen()
        assert by_table.moves == by_parser.moves


def test_texts_outside_the_table_are_parsed_and_explained_as_before() -> None:
    game = Game(get_variant("minishogi"))
    assert "e1e4" in game.position.legal_by_text()
    assert " e1e4 " not in game.position.legal_by_text()
    with pytest.raises(IllegalMoveError, match="a1a5"):
        game.play("a1a5")
    with pytest.raises(InvalidMoveError, match="not a move in coordinate form"):
        game.play("E1E4")
    assert game.ply == 0
    assert game.play(" e1e4 ").uci == "e1e4"  # surrounding spaces: parsed, as before


def test_a_taken_back_move_leaves_a_table_of_the_position_it_returns_to() -> None:
    game = Game(get_variant("minishogi"))
    before = dict(game.position.legal_by_text())
    game.play("e1e4")
    game.undo()
    assert game.position.legal_by_text() == before


def test_the_rank_cache_is_bounded_and_never_changes_a_fen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fen_module, "FEN_RANKS_KEPT", 7)
    for name in ("minishogi", "shoshogi", "spartan"):
        variant = get_variant(name)
        variant.t.fen_ranks.clear()
        for game in positions_of_random_games(name, 2, 30, seed=43):
            pos = game.position
            text = pos.fen()
            assert len(variant.t.fen_ranks) <= 7
            again = Position.from_fen(variant, text)
            assert (again.board, again.hands, again.turn) == (pos.board, pos.hands, pos.turn)
        variant.t.fen_ranks.clear()

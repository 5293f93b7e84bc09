"""Dai Shogi perft and random play against the independent oracle (test_daishogi_oracle.py):
the start position to depth 2, seeded random playouts (FEN round trip and oracle move list at
every ply) and seeded random crowded positions full of Lion-power pieces."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from test_daishogi_oracle import FORCED_FROM_RANK, PIECES, SIZE, Board, fen_of, legal_moves, perft
from test_daishogi_pieces import engine_keys

from server.rules import Game, Position, get_variant

DAI = get_variant("daishogi")
DISPLAY = re.compile(
    r"^\+?[A-Z][A-Za-z]?(\d{1,2}[a-o])?(x!\d{1,2}[a-o]|(x\d{1,2}[a-o])?[-x]\d{1,2}[a-o][+=]?)$"
)


def engine_perft(pos: Position, depth: int) -> int:
    if depth == 0:
        return 1
    moves = pos.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(engine_perft(pos.play(m), depth - 1) for m in moves)


def test_perft_from_the_start_position_to_depth_2() -> None:
    start = Position.from_fen(DAI, DAI.start_fen)
    expected = perft(Board.from_fen(DAI.start_fen), 2)
    assert engine_perft(start, 1) == perft(Board.from_fen(DAI.start_fen), 1) == 71
    assert engine_perft(start, 2) == expected == 71 * 71


def _pick(rng: random.Random, g: Game) -> str:
    """A random legal move, captures preferred half of the time (to reach Lion fights)."""
    pos = g.position
    moves = pos.legal_moves()
    captures = [m for m in moves if pos.is_capture(m)]
    pool = captures if captures and rng.random() < 0.5 else moves
    return pos.uci(rng.choice(pool))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_playouts_match_the_oracle_and_round_trip_fen(seed: int, long_sweep: bool) -> None:
    rng = random.Random(seed)
    g = Game(DAI)
    kinds: Counter[str] = Counter()
    for _ in range(2000 if long_sweep else 300):
        if g.outcome() is not None:
            break
        pos = g.position
        fen = g.fen()
        again = Position.from_fen(DAI, fen)
        assert again.fen() == fen and again.board == pos.board and again.turn == pos.turn
        keys = engine_keys(pos)
        assert len(keys) == len(set(keys))
        assert Counter(keys) == Counter(legal_moves(Board.from_fen(fen)))
        text = _pick(rng, g)
        record = g.play(text)
        assert record.uci == text
        assert DISPLAY.match(record.display), record.display
        kinds["multi-leg" if "," in text else "pass" if text == "@@@@" else "plain"] += 1
    assert kinds["plain"] > 50
    assert g.ply > 100 or g.outcome() is not None


def _random_position(rng: random.Random) -> str:
    """A crowded random position: Lions, Falcons and Eagles among random pieces."""
    squares = [(f, r) for f in range(SIZE) for r in range(SIZE)]
    rng.shuffle(squares)
    symbols = sorted(PIECES)
    pieces: dict[str, str] = {}
    lions = ["L!", "+O", "+H", "+D"] * 2
    for i, (f, r) in enumerate(squares[:90]):
        symbol = lions[i] if i < len(lions) else rng.choice(symbols)
        side = rng.randrange(2)
        relative = r if side == 0 else SIZE - 1 - r
        if symbol in FORCED_FROM_RANK and relative > FORCED_FROM_RANK[symbol] - 1:
            continue  # such a piece could never move from there
        name = "abcdefghijklmno"[f] + str(r + 1)
        pieces[name] = symbol if side == 0 else symbol.lower()
    return fen_of(pieces, rng.choice("wb"))


def test_random_crowded_positions_match_the_oracle() -> None:
    rng = random.Random(2024)
    multi = 0
    for _ in range(150):
        fen = _random_position(rng)
        pos = Position.from_fen(DAI, fen)
        keys = engine_keys(pos)
        assert len(keys) == len(set(keys)), fen
        assert Counter(keys) == Counter(legal_moves(Board.from_fen(fen))), fen
        multi += sum(1 for k in keys if len(k) == 4 and k[1])
        for m in pos.legal_moves()[:: max(1, len(keys) // 5)]:
            after = pos.play(m)
            assert Position.from_fen(DAI, after.fen()).fen() == after.fen()
    assert multi > 500  # the positions really exercise Lion captures

"""The USI writer (server.rules.export), checked against Fairy-Stockfish.

Mini-Shogi and Sho Shogi exports are converted back to Fairy-Stockfish's coordinates (by an
independent converter below) and replayed by pyffish to the same final position; Dai Shogi's
documented extension (beyond USI's 9 files) reads back exactly.
"""

from __future__ import annotations

import re

import pyffish
import pytest
from export_games import lion_first, play_game, record_of

from server.rules import Game, Position, get_variant
from server.rules.export import replay, write_kif, write_usi


def usi_to_fsf(usi: str, files: int, ranks: int) -> str:
    """An independent reading of a USI move into Fairy-Stockfish's coordinates."""

    def square(text: str) -> str:
        number, letter = int(text[:-1]), text[-1]
        return f"{chr(ord('a') + files - number)}{ranks - (ord(letter) - ord('a'))}"

    if usi == "pass":
        return "@@@@"
    if "*" in usi:
        piece, target = usi.split("*")
        return f"{piece}@{square(target)}"
    promote = usi.endswith("+")
    body = usi.rstrip("+")
    legs = []
    for leg in body.split(","):
        first, second = re.fullmatch(r"(\d+[a-o])(\d+[a-o])", leg).groups()  # type: ignore[union-attr]
        legs.append(square(first) + square(second))
    return ",".join(legs) + ("+" if promote else "")


def sfen_to_fen(sfen: str, hands_in_brackets: bool) -> str:
    board, turn, hand, number = sfen.split()
    pieces = "" if hand == "-" else re.sub(r"(\d+)(\D)", lambda m: m[2] * int(m[1]), hand)
    fsf_turn = "w" if turn == "b" else "b"
    bracket = f"[{pieces}]" if hands_in_brackets else ""
    return f"{board}{bracket} {fsf_turn} - - 0 {(int(number) + 1) // 2}"


def normalised(fen: str) -> tuple[str, str, str]:
    """Board, sorted hand and side to move of a FEN (hand order differs between writers)."""
    fields = fen.split()
    board, _, hand = fields[0].partition("[")
    return board, "".join(sorted(hand.rstrip("]"))), fields[1]


def no_crown_prince_promotion(game: Game, uci: str) -> bool:
    """FSF and the engine disagree on promoting the Drunk Elephant while the King is attacked
    (documented in test_differential_shogi): keep such moves out of these games."""
    pos = game.position
    move = pos.move_from_uci(uci)
    return not (move.promotion and pos.variant.t.royal[move.promotion])


@pytest.mark.parametrize("name", ["minishogi", "shoshogi"])
@pytest.mark.parametrize("seed", range(6))
def test_usi_replays_on_fairy_stockfish(name: str, seed: int) -> None:
    game = play_game(name, 100 + seed, 200, allowed=no_crown_prince_promotion)
    line = write_usi(record_of(game))
    assert line.endswith("\n") and line.count("\n") == 1
    match = re.fullmatch(r"position sfen (\S+ [bw] \S+ \d+)(?: moves (.*))?\n", line)
    assert match is not None
    sfen, moves = match.groups()
    usi_moves = moves.split() if moves else []
    assert len(usi_moves) == game.ply
    v = get_variant(name)
    g = v.geometry
    fen = sfen_to_fen(sfen, v.hand_in_fen)
    assert normalised(fen) == normalised(Position.from_fen(v, v.start_fen).fen())
    fsf_moves = [usi_to_fsf(m, g.files, g.ranks) for m in usi_moves]
    assert fsf_moves == game.moves
    final = pyffish.get_fen(name, fen, fsf_moves)
    assert normalised(final) == normalised(game.fen())


def test_usi_games_exercise_drops_and_promotions() -> None:
    lines = [
        write_usi(record_of(play_game(name, 100 + seed, 200, allowed=no_crown_prince_promotion)))
        for name in ("minishogi", "shoshogi")
        for seed in range(6)
    ]
    assert any("*" in line for line in lines)
    assert sum(line.count("+") for line in lines) > 10


def test_usi_sfen_of_a_later_start() -> None:
    mini = get_variant("minishogi")
    game = replay(mini, "1bsk1/r3g/5/P4/K1G2[RPbs] w - - 0 6", ["a1b2", "b5c4"])
    assert write_usi(record_of(game)) == (
        "position sfen 1bsk1/r3g/5/P4/K1G2 b RPbs 11 moves 5e4d 4a3b\n"
    )


@pytest.mark.parametrize("seed", range(3))
def test_dai_usi_extension_round_trips(seed: int) -> None:
    """Dai Shogi is beyond USI (15 files): the documented extension reads back exactly."""

    game = play_game("daishogi", seed, 120, policy=lion_first)
    line = write_usi(record_of(game))
    moves = line.split(" moves ")[1].split()
    assert any("," in m for m in moves) or "pass" in moves
    assert any(re.match(r"1[0-5][a-o]", m) for m in moves)
    assert [usi_to_fsf(m, 15, 15) for m in moves] == game.moves


def test_usi_and_kif_refuse_chess_variants() -> None:
    game = replay(get_variant("spartan"), None, [])
    with pytest.raises(ValueError, match="shogi"):
        write_usi(record_of(game))
    with pytest.raises(ValueError, match="shogi"):
        write_kif(record_of(game))

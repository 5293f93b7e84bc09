"""Chess-family speed side by side with python-chess, on Wild Castle positions with kings on e.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_chess.py
    .venv/bin/python bench/bench_chess.py --games 20 --seed 3 --depth 3

With both kings on e a Wild Castle position obeys standard chess rules, so python-chess
(``chess``, a dev dependency) can play the same moves. Times are this process's CPU time (not
inflated when other programs load the machine); the best of ``--rounds`` rounds is reported.

* **move check**: one move checked and applied on a fresh position, as the hub does for an
  incoming move. Engine: ``Position.move_from_uci`` (generates the legal moves) then
  ``Position.play``. python-chess: ``Move.from_uci``, ``Board.is_legal``, ``Board.push``.
* **full move**: ``Game.play`` (check, apply, SAN, check mark, repetition) then
  ``Game.outcome()`` against python-chess ``Board.san`` + ``Board.push`` + ``Board.outcome``.
* **hub move**: what the hub does per move: ``Game.play`` (check, apply, SAN), ``Game.fen()``
  and ``Game.legal_moves()`` (the next position's legal moves as sorted coordinate strings,
  with the outcome they decide), against python-chess doing the same for the event — ``push``, ``fen()``
  and the sorted ``uci()`` of ``legal_moves`` — with no validation, SAN or outcome on its side
  (the comparison of 2026-11-25: the engine does more, in at least as little time).
* **perft**: the number of legal move sequences of ``--depth`` plies, both counting the legal
  moves at the last ply without playing them (python-chess: recursive ``push``/``pop``), on
  the positions above and on the standard perft positions (start, Kiwipete, position 3), which
  are Wild Castle positions with the king on e.

Positions: four setups of the seed generator with the King on e, plus the positions reached
after 20 and 40 plies of seeded random play from each of them (endings excluded).
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable

import checkout  # noqa: F401  (this checkout's server on sys.path)
import chess

from server.rules import Game, Position, get_variant
from server.rules.chess_family import SEED_SETUPS

WILD = get_variant("wildcastle")
cpu = time.process_time_ns


def perft(position: Position, depth: int) -> int:
    """The engine's perft: legal move sequences of ``depth`` plies (leaves counted in bulk)."""
    moves = position.legal_moves()
    if depth <= 1:
        return len(moves) if depth == 1 else 1
    return sum(perft(position.play(m), depth - 1) for m in moves)


def positions(seed: int) -> list[str]:
    """Setups with the King on e and seeded random-play positions reached from them."""
    rng = random.Random(seed)
    e_setups = [f for f in SEED_SETUPS.fens if f.split("/")[7].index("K") == 4]
    out = []
    for start in rng.sample(e_setups, 4):
        out.append(start)
        game = Game(WILD, start)
        for target in (20, 40):
            while game.ply < target and game.outcome() is None:
                game.play(rng.choice(game.legal_moves()))
            if game.outcome() is None:
                out.append(game.fen())
    return out


def play_sequences(fens: list[str], seed: int, plies: int) -> list[tuple[str, list[str]]]:
    """A seeded random continuation of ``plies`` moves from each position."""
    rng = random.Random(seed)
    out = []
    for fen in fens:
        game = Game(WILD, fen)
        while game.ply < plies and game.outcome() is None:
            game.play(rng.choice(game.legal_moves()))
        out.append((fen, list(game.moves)))
    return out


def best_of(rounds: int, run: Callable[[], int]) -> float:
    """Least CPU ns per item over ``rounds`` runs of ``run`` (which returns its item count)."""
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        t0 = cpu()
        items = run()
        best = min(best, (cpu() - t0) / items)
    return best


def engine_check(sequences: list[tuple[str, list[str]]]) -> Callable[[], int]:
    prepared = []
    for fen, moves in sequences:
        pos = Position.from_fen(WILD, fen)
        for uci in moves:
            prepared.append((pos, uci))
            pos = pos.play(pos.move_from_uci(uci))

    def run() -> int:
        for pos, uci in prepared:
            fresh = Position(
                WILD,
                pos.board,
                pos.hands,
                pos.turn,
                pos.castling,
                pos.ep,
                pos.halfmove,
                pos.fullmove,
            )
            fresh.play(fresh.move_from_uci(uci))
        return len(prepared)

    return run


def chess_check(sequences: list[tuple[str, list[str]]]) -> Callable[[], int]:
    prepared = []
    for fen, moves in sequences:
        board = chess.Board(fen)
        for uci in moves:
            prepared.append((board.copy(stack=False), uci))
            board.push_uci(uci)

    def run() -> int:
        for board, uci in prepared:
            move = chess.Move.from_uci(uci)
            if not board.is_legal(move):
                raise AssertionError(uci)
            board.push(move)
            board.pop()
        return len(prepared)

    return run


def engine_full(sequences: list[tuple[str, list[str]]]) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for fen, moves in sequences:
            game = Game(WILD, fen)
            for uci in moves:
                game.play(uci)
                game.outcome()  # decided when asked since Game.play leaves it (67ff1ca)
                n += 1
        return n

    return run


def chess_full(sequences: list[tuple[str, list[str]]]) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for fen, moves in sequences:
            board = chess.Board(fen)
            for uci in moves:
                move = chess.Move.from_uci(uci)
                if not board.is_legal(move):
                    raise AssertionError(uci)
                board.san(move)
                board.push(move)
                board.outcome(claim_draw=False)
                n += 1
        return n

    return run


def engine_hub(sequences: list[tuple[str, list[str]]]) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for fen, moves in sequences:
            game = Game(WILD, fen)
            for uci in moves:
                game.play(uci)
                game.fen()
                game.legal_moves()
                n += 1
        return n

    return run


def chess_hub(sequences: list[tuple[str, list[str]]]) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for fen, moves in sequences:
            board = chess.Board(fen)
            for uci in moves:
                board.push(chess.Move.from_uci(uci))
                board.fen()
                sorted(m.uci() for m in board.legal_moves)
                n += 1
        return n

    return run


STANDARD_PERFT = (
    ("start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 3),
    ("Kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 3),
    ("position 3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4),
)


def chess_perft(board: chess.Board, depth: int) -> int:
    if depth == 1:
        return board.legal_moves.count()
    nodes = 0
    for move in board.legal_moves:
        board.push(move)
        nodes += chess_perft(board, depth - 1)
        board.pop()
    return nodes


def perft_rates(fens: list[str], depth: int, rounds: int) -> tuple[int, float, float]:
    """Total nodes, and nodes per CPU second for the engine and for python-chess."""
    totals = []
    for fen in fens:
        ours = perft(Position.from_fen(WILD, fen), depth)
        theirs = chess_perft(chess.Board(fen), depth)
        if ours != theirs:
            raise AssertionError(f"perft {depth} of {fen}: engine {ours}, python-chess {theirs}")
        totals.append(ours)
    nodes = sum(totals)

    def ours_run() -> int:
        return sum(perft(Position.from_fen(WILD, fen), depth) for fen in fens)

    def theirs_run() -> int:
        return sum(chess_perft(chess.Board(fen), depth) for fen in fens)

    ns_ours = best_of(rounds, ours_run)
    ns_theirs = best_of(rounds, theirs_run)
    return nodes, 1e9 / ns_ours, 1e9 / ns_theirs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--plies", type=int, default=30, help="moves timed from each position")
    parser.add_argument("--depth", type=int, default=3, help="perft depth (default 3)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    fens = positions(args.seed)
    sequences = play_sequences(fens, args.seed, args.plies)
    moves = sum(len(m) for _, m in sequences)
    print(
        f"wildcastle (kings on e): {len(fens)} positions, {moves} timed moves, perft depth {args.depth}"
    )
    print("| measure | engine | python-chess | engine / python-chess |")
    print("|---|---:|---:|---:|")
    for label, ours, theirs in (
        ("move check, µs per move", engine_check(sequences), chess_check(sequences)),
        ("full move, µs per move", engine_full(sequences), chess_full(sequences)),
        ("hub move, µs per move", engine_hub(sequences), chess_hub(sequences)),
    ):
        a = best_of(args.rounds, ours) / 1000
        b = best_of(args.rounds, theirs) / 1000
        print(f"| {label} | {a:.0f} | {b:.0f} | {a / b:.2f}× the time |")
    nodes, ours_rate, theirs_rate = perft_rates(fens, args.depth, args.rounds)
    print(
        f"| perft {args.depth}, nodes/s ({nodes:,} nodes) | {ours_rate:,.0f} | {theirs_rate:,.0f} |"
        f" {ours_rate / theirs_rate:.2f}× the speed |"
    )
    for name, fen, depth in STANDARD_PERFT:
        nodes, ours_rate, theirs_rate = perft_rates([fen], depth, args.rounds)
        print(
            f"| perft {depth} {name}, nodes/s ({nodes:,} nodes) | {ours_rate:,.0f} |"
            f" {theirs_rate:,.0f} | {ours_rate / theirs_rate:.2f}× the speed |"
        )
    per_position = []
    for fen in fens:
        pos = Position.from_fen(WILD, fen)
        t0 = cpu()
        pos.legal_moves()
        per_position.append((cpu() - t0) / 1000)
    print(f"legal move generation, fresh position: median {statistics.median(per_position):.0f} µs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

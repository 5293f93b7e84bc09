"""Wild Castle against Fairy-Stockfish and python-chess: perft, setups and playouts.

FSF has no Wild Castle, and its castling options are global, so each position is checked with
the FSF variant that matches the king of the side to move: ``chess`` when it stands on e (or
cannot castle), and ``wildcastled`` (``[wildcastled:chess]`` with ``castlingKingFile = d``,
``castlingKingsideFile = f``, ``castlingQueensideFile = b``) when it stands on d with a castling
right. The other side's castling only matters on its own turn, so every position, including
those with the kings on different files, is checked with the right rules. Queries pass our
FEN with no move history; endings that need history are checked with python-chess.

python-chess follows every game whose kings both start on e (standard castling) at every ply:
legal moves, FEN, SAN, check, mate, stalemate, insufficient material, repetition and move
counts.

FSF's SAN labels d-file castling by side (spec §3.7), so castling SAN is compared with the
nearer-rook rule instead of FSF.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import chess
import pyffish
import pytest

from server.rules import (
    Game,
    InvalidFenError,
    Position,
    Side,
    Termination,
    get_variant,
    has_mating_material,
)
from server.rules.chess_family import ICS_SETUPS, SEED_SETUPS, wildcastle_dead_position

WILD = get_variant("wildcastle")
D_KING = "wildcastled"
VALUE_MATE = int(pyffish.VALUE_MATE)

if D_KING not in pyffish.variants():
    pyffish.load_variant_config(
        f"[{D_KING}:chess]\ncastlingKingFile = d\ncastlingKingsideFile = f\ncastlingQueensideFile = b\n"
    )


def perft(position: Position, depth: int) -> int:
    """The engine's perft: legal move sequences of ``depth`` plies (leaves counted in bulk)."""
    moves = position.legal_moves()
    if depth <= 1:
        return len(moves) if depth == 1 else 1
    return sum(perft(position.play(m), depth - 1) for m in moves)


def fsf_variant(pos: Position) -> str:
    """The FSF variant whose castling rules fit the side to move of ``pos``."""
    g = WILD.geometry
    king = pos.royals[pos.turn][0]
    rights = pos.castling >> (2 * pos.turn) & 3
    return D_KING if rights and g.file_of(king) == 3 else "chess"


def fsf_perft(variant: str, fen: str, depth: int, moves: tuple[str, ...] = ()) -> int:
    legal = pyffish.legal_moves(variant, fen, list(moves))
    if depth <= 1:
        return len(legal) if depth == 1 else 1
    return sum(fsf_perft(variant, fen, depth - 1, (*moves, m)) for m in legal)


# ------------------------------------------------------------------- perft


@pytest.mark.parametrize(
    ("fen", "depth"),
    [
        (SEED_SETUPS.setup_fen(0), 2),
        (SEED_SETUPS.setup_fen(35), 2),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", 2),
        ("r2k3r/8/8/8/8/8/8/R2K3R b KQkq - 0 1", 2),
        ("r2k3r/p6p/8/8/8/8/P6P/R2K3R w KQkq - 0 1", 3),
        ("r2k3r/1b4b1/8/8/8/8/1B4B1/R2K3R w KQkq - 0 1", 2),  # attacked castling squares
        ("2r1k3/8/8/8/8/8/8/R2K3R w KQ - 0 1", 3),
    ],
)
def test_perft_d_king_matches_fairy_stockfish(fen: str, depth: int) -> None:
    assert perft(Position.from_fen(WILD, fen), depth) == fsf_perft(D_KING, fen, depth)


# Chess reference values from FSF's tests/perft.sh (chessprogramming.org perft positions), and
# d-king values computed with pyffish 0.0.90 (``wildcastled``) by fsf_perft: minutes of FSF
# calls, so ``--long`` recomputes only the d-king ones.
CHESS_PERFT = [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 4, 197281),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 3, 97862),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4, 43238),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 3, 9467),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 3, 62379),
]
D_KING_PERFT = [
    ("r2k3r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R2K3R w KQkq - 0 1", 3, 91228),
    ("rbbknnqr/pppppppp/8/8/8/8/PPPPPPPP/RBBKNNQR w KQkq - 0 1", 4, 202966),
]


@pytest.mark.parametrize(("fen", "depth", "nodes"), CHESS_PERFT)
def test_perft_chess_reference_values(fen: str, depth: int, nodes: int) -> None:
    assert perft(Position.from_fen(WILD, fen), depth) == nodes


@pytest.mark.parametrize(("fen", "depth", "nodes"), D_KING_PERFT)
def test_perft_d_king_reference_values(fen: str, depth: int, nodes: int, long_sweep: bool) -> None:
    assert perft(Position.from_fen(WILD, fen), depth) == nodes
    if long_sweep:
        assert fsf_perft(D_KING, fen, depth) == nodes


def test_every_setup_matches_fairy_stockfish() -> None:
    """All 36 + 64 setups: same legal moves, and the same FEN after each first move."""
    for fen in (*SEED_SETUPS.fens, *ICS_SETUPS.fens):
        pos = Position.from_fen(WILD, fen)
        variant = fsf_variant(pos)
        ours = sorted(pos.uci(m) for m in pos.legal_moves())
        assert ours == sorted(pyffish.legal_moves(variant, fen, [])), fen
        first = pos.move_from_uci(ours[0])
        assert pos.play(first).fen() == pyffish.get_fen(variant, fen, [ours[0]]), fen


# ---------------------------------------------------------------- playouts


@dataclass
class Sweep:
    """What one playout sweep found: mismatches per aspect, and what it covered."""

    failures: dict[str, list[str]] = field(default_factory=dict)
    fsf_plies: int = 0
    chess_plies: int = 0
    endings: dict[str, int] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)

    def fail(self, aspect: str, message: str) -> None:
        self.failures.setdefault(aspect, []).append(message)

    def count(self, what: str) -> None:
        self.seen[what] = self.seen.get(what, 0) + 1

    def report(self, aspect: str) -> str:
        found = self.failures.get(aspect, [])
        return f"{len(found)} {aspect} mismatches, first: {found[:3]}"


def castle_san(pos: Position, uci: str) -> str | None:
    """The expected SAN of a castling move by the nearer-rook rule, None if not castling."""
    g = WILD.geometry
    move = pos.move_from_uci(uci)
    if abs(pos.board[move.from_sq]) != WILD.t.castle_king:
        return None
    king_file, to_file = g.file_of(move.from_sq), g.file_of(move.to_sq)
    if abs(king_file - to_file) != 2:
        return None
    rook_file = 7 if to_file > king_file else 0
    nearer = abs(rook_file - king_file) == 3
    return "O-O" if nearer else "O-O-O"


def verify_with_fsf(sweep: Sweep, game: Game, move: str) -> None:
    pos = game.position
    fen = pos.fen()
    variant = fsf_variant(pos)
    ours = {pos.uci(m) for m in pos.legal_moves()}
    theirs = set(pyffish.legal_moves(variant, fen, []))
    if ours != theirs:
        sweep.fail("legal", f"{variant} {fen}: engine only {sorted(ours - theirs)}, FSF only {sorted(theirs - ours)}")
    castle = castle_san(pos, move)
    fsf_san = pyffish.get_san(variant, fen, move) if castle is None else ""
    record = game.play(move)
    after = game.fen()
    sweep.fsf_plies += 1
    fsf_after = pyffish.get_fen(variant, fen, [move])
    if after != fsf_after:
        sweep.fail("fen", f"{variant} {fen} {move}: engine {after}, FSF {fsf_after}")
    if castle is not None:
        if record.display.rstrip("+#") != castle:
            sweep.fail("san", f"{fen} {move}: engine {record.display}, expected {castle}")
    elif record.display != fsf_san:
        sweep.fail("san", f"{variant} {fen} {move}: engine {record.display}, FSF {fsf_san}")
    check = bool(pyffish.gives_check(fsf_variant(game.position), after, []))
    if check != game.position.is_check():
        sweep.fail("check", f"{after}: engine in check {game.position.is_check()}, FSF {check}")
    if game.outcome() is None and game.position.halfmove >= 98:
        fifty = bool(pyffish.is_optional_game_end("chess", after, [])[0])
        if fifty != (game.claimable_draw() is Termination.FIFTY_MOVES):
            sweep.fail("claims", f"{after}: engine claim {game.claimable_draw()}, FSF 50-move {fifty}")


def verify_ending_with_fsf(sweep: Sweep, game: Game) -> None:
    outcome = game.outcome()
    name = outcome.termination.value if outcome else "unfinished"
    sweep.endings[name] = sweep.endings.get(name, 0) + 1
    if outcome is None or outcome.termination not in (Termination.CHECKMATE, Termination.STALEMATE):
        return
    fen = game.fen()
    variant = fsf_variant(game.position)
    if pyffish.legal_moves(variant, fen, []):
        sweep.fail("endings", f"{fen}: engine {name}, FSF has moves")
        return
    value = pyffish.game_result(variant, fen, [])
    expected = 0 if outcome.winner is None else -VALUE_MATE
    if value != expected:
        sweep.fail("endings", f"{fen}: engine {outcome}, FSF value {value}")


def verify_with_python_chess(sweep: Sweep, game: Game, board: chess.Board, move: str) -> None:
    """Play ``move`` on both and compare everything python-chess knows."""
    pos = game.position
    ours = {pos.uci(m) for m in pos.legal_moves()}
    theirs = {m.uci() for m in board.legal_moves}
    if ours != theirs:
        sweep.fail("chess-legal", f"{board.fen()}: engine only {sorted(ours - theirs)}, python-chess only {sorted(theirs - ours)}")
    pc_move = chess.Move.from_uci(move)
    pc_san = board.san(pc_move)
    board.push(pc_move)
    record = game.play(move)
    sweep.chess_plies += 1
    if record.display != pc_san:
        sweep.fail("chess-san", f"{game.position_at(game.ply - 1).fen()} {move}: engine {record.display}, python-chess {pc_san}")
    if game.fen() != board.fen(en_passant="xfen"):
        sweep.fail("chess-fen", f"{move}: engine {game.fen()}, python-chess {board.fen(en_passant='xfen')}")
    after = game.position
    if after.is_check() != board.is_check():
        sweep.fail("chess-check", f"{game.fen()}: engine {after.is_check()}")
    outcome = game.outcome()
    expected = python_chess_ending(board)
    actual = outcome.termination if outcome else None
    if actual != expected:
        sweep.fail("chess-endings", f"{game.fen()}: engine {actual}, python-chess {expected}")
    claim = game.claimable_draw()
    if outcome is None:
        expected_claim = (
            Termination.REPETITION if board.is_repetition(3)
            else Termination.FIFTY_MOVES if board.is_fifty_moves()
            else None
        )
        if claim != expected_claim:
            sweep.fail("chess-claims", f"{game.fen()}: engine {claim}, python-chess {expected_claim}")
    for side, colour in ((Side.FIRST, chess.WHITE), (Side.SECOND, chess.BLACK)):
        if has_mating_material(after, side) == board.has_insufficient_material(colour):
            sweep.fail("chess-material", f"{game.fen()}: engine has_mating_material({side.name}) wrong")


def python_chess_ending(board: chess.Board) -> Termination | None:
    """The automatic ending python-chess sees, in the engine's order of precedence."""
    if board.is_checkmate():
        return Termination.CHECKMATE
    if board.is_stalemate():
        return Termination.STALEMATE
    if board.is_fivefold_repetition():
        return Termination.REPETITION
    if board.is_seventyfive_moves():
        return Termination.SEVENTY_FIVE_MOVES
    if board.is_insufficient_material():
        return Termination.DEAD_POSITION
    return None


def sparse(fen: str, rng: random.Random) -> str:
    """``fen`` with a random part of the non-royal pieces taken off (castling rights follow
    the rooks), so that playouts reach castling and endgames quickly."""
    pos = Position.from_fen(WILD, fen)
    royal = WILD.t.royal
    while True:
        keep = rng.uniform(0.15, 0.7)
        board = tuple(p if not p or royal[abs(p)] or rng.random() < keep else 0 for p in pos.board)
        try:  # a queen or bishop may now attack the king of the side not to move: draw again
            return Position.from_fen(WILD, Position(WILD, board, pos.hands, 0, pos.castling).fen()).fen()
        except InvalidFenError:
            continue


def both_kings_on_e(fen: str) -> bool:
    pos = Position.from_fen(WILD, fen)
    return all(WILD.geometry.file_of(pos.royals[side][0]) == 4 for side in (0, 1))


def run_sweep(games: int, fsf_sample: float, seed: int, max_plies: int) -> Sweep:
    """Games from both generators, every other one thinned out; FSF checks a sample of plies,
    python-chess every ply of the games with both kings on e."""
    sweep = Sweep()
    rng = random.Random(seed)
    for number in range(games):
        start = (SEED_SETUPS if number % 4 < 2 else ICS_SETUPS)(rng)
        if number % 2:
            start = sparse(start, rng)
        game = Game(WILD, start)
        board = chess.Board(start) if both_kings_on_e(start) else None
        while game.outcome() is None and game.ply < max_plies:
            legal = game.legal_moves()
            castles = [m for m in legal if castle_san(game.position, m) is not None]
            # Random play seldom castles: take a castling move half the times one is there.
            move = rng.choice(castles if castles and rng.random() < 0.5 else legal)
            if move in castles:
                sweep.count(f"castling {move[0]}-king")
            if board is not None:
                verify_with_python_chess(sweep, game, board, move)
            elif rng.random() < fsf_sample:
                verify_with_fsf(sweep, game, move)
            else:
                game.play(move)
        verify_ending_with_fsf(sweep, game)
    return sweep


@pytest.fixture(scope="module")
def sweep(long_sweep: bool) -> Sweep:
    if long_sweep:
        return run_sweep(games=300, fsf_sample=1.0, seed=12, max_plies=400)
    return run_sweep(games=32, fsf_sample=0.1, seed=11, max_plies=200)


def test_playouts_cover_the_rules(sweep: Sweep) -> None:
    assert sweep.fsf_plies > 300 and sweep.chess_plies > 1500, (sweep.fsf_plies, sweep.chess_plies)
    for feature in ("castling d-king", "castling e-king"):
        assert sweep.seen.get(feature, 0) > 0, (feature, sweep.seen)
    assert sweep.endings.get("checkmate", 0) > 0, sweep.endings


@pytest.mark.parametrize("aspect", ["legal", "fen", "san", "check", "claims", "endings"])
def test_playouts_match_fairy_stockfish(sweep: Sweep, aspect: str) -> None:
    assert not sweep.failures.get(aspect), sweep.report(aspect)


@pytest.mark.parametrize("aspect", ["legal", "san", "fen", "check", "endings", "claims", "material"])
def test_playouts_match_python_chess(sweep: Sweep, aspect: str) -> None:
    assert not sweep.failures.get("chess-" + aspect), sweep.report("chess-" + aspect)


# ---------------------------------------------------- dead position, material


def random_material(rng: random.Random) -> str:
    """Two kings and a few random pieces (no pawns on the end ranks), either side to move."""
    while True:
        squares = rng.sample(range(64), 6)
        board = [0] * 64
        board[squares[0]], board[squares[1]] = 1, -1
        for sq in squares[2 : 2 + rng.randint(0, 4)]:
            code = rng.choice([2, 3, 4, 4, 4, 5, 5, 5, 6])  # Q R B N P by catalogue code
            if code == 6 and sq // 8 in (0, 7):
                continue
            board[sq] = code * rng.choice((1, -1))
        pos = Position(WILD, tuple(board), ((0,) * 7, (0,) * 7), rng.randint(0, 1))
        try:
            return Position.from_fen(WILD, pos.fen()).fen()
        except ValueError:
            continue


def test_dead_position_and_mating_material_match_python_chess() -> None:
    rng = random.Random(5)
    dead = 0
    for _ in range(3000):
        fen = random_material(rng)
        pos = Position.from_fen(WILD, fen)
        board = chess.Board(fen)
        assert wildcastle_dead_position(pos) == board.is_insufficient_material(), fen
        dead += board.is_insufficient_material()
        for side, colour in ((Side.FIRST, chess.WHITE), (Side.SECOND, chess.BLACK)):
            assert has_mating_material(pos, side) != board.has_insufficient_material(colour), (fen, side)
    assert dead > 100

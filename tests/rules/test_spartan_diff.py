"""Spartan Chess against Fairy-Stockfish (pyffish variant ``spartan``): perft and playouts.

The playout sweep plays seeded random games with the engine and asks FSF, at a sample of
plies (every ply with ``--long``), for the legal moves, the FEN after the move, check, and SAN
of the position as our engine wrote it. Endings are compared at the end of every game. The
sweep runs once per module; each test below checks one aspect of it.

FSF's SAN does not mark check against Spartan kings or from some Spartan pieces (its check
marker misses commoner kings), so SAN is compared without ``+``/``#``; the suffix itself is
checked against FSF's ``gives_check`` (in check after the move) instead.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pyffish
import pytest

from server.rules import Game, InvalidFenError, Position, Side, Termination, get_variant

SPARTAN = get_variant("spartan")
FSF = "spartan"
VALUE_MATE = int(pyffish.VALUE_MATE)


def perft(position: Position, depth: int) -> int:
    """The engine's perft: legal move sequences of ``depth`` plies (leaves counted in bulk)."""
    moves = position.legal_moves()
    if depth <= 1:
        return len(moves) if depth == 1 else 1
    return sum(perft(position.play(m), depth - 1) for m in moves)


def fsf_perft(fen: str, depth: int, moves: tuple[str, ...] = ()) -> int:
    legal = pyffish.legal_moves(FSF, fen, list(moves))
    if depth <= 1:
        return len(legal) if depth == 1 else 1
    return sum(fsf_perft(fen, depth - 1, (*moves, m)) for m in legal)


# ------------------------------------------------------------------- perft


@pytest.mark.parametrize(
    ("fen", "depth"),
    [
        (SPARTAN.start_fen, 2),
        ("lgkcckwl/hhh2hhh/3hh3/8/8/3PP3/PPP2PPP/R3K2R w KQ - 0 1", 2),  # castling
        ("1k2k3/2h3h1/8/3P4/8/8/1h6/R3K2R b KQ - 0 1", 2),  # promotions, two kings
        ("k6k/8/8/8/8/8/8/R3K2R b - - 0 1", 3),  # duple check
        ("3k4/1P6/8/8/8/8/3h4/R3K3 w Q - 0 1", 3),  # both sides promote
    ],
)
def test_perft_matches_fairy_stockfish(fen: str, depth: int) -> None:
    assert perft(Position.from_fen(SPARTAN, fen), depth) == fsf_perft(fen, depth)


# Computed with pyffish 0.0.90 (FSF ``spartan``) by the same recursion as fsf_perft: too slow
# (minutes) to recompute in CI; ``--long`` recomputes them.
REFERENCE_PERFT = [
    (SPARTAN.start_fen, 4, 473282),
    ("lgkcckwl/hhh2hhh/3hh3/8/8/3PP3/PPP2PPP/R3K2R w KQ - 0 1", 3, 17927),
    ("1k2k3/2h3h1/8/3P4/8/8/1h6/R3K2R b KQ - 0 1", 4, 246450),
]


@pytest.mark.parametrize(("fen", "depth", "nodes"), REFERENCE_PERFT)
def test_perft_deep_reference_values(fen: str, depth: int, nodes: int, long_sweep: bool) -> None:
    if nodes > 300_000 and not long_sweep:
        pytest.skip("seconds of engine time: runs with --long")
    assert perft(Position.from_fen(SPARTAN, fen), depth) == nodes
    if long_sweep:
        assert fsf_perft(fen, depth) == nodes


# ---------------------------------------------------------------- playouts


@dataclass
class Sweep:
    """What one playout sweep found: mismatches per aspect, and what it covered."""

    failures: dict[str, list[str]] = field(default_factory=dict)
    verified_plies: int = 0
    games: int = 0
    endings: dict[str, int] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)

    def fail(self, aspect: str, message: str) -> None:
        self.failures.setdefault(aspect, []).append(message)

    def count(self, what: str) -> None:
        self.seen[what] = self.seen.get(what, 0) + 1

    def report(self, aspect: str) -> str:
        found = self.failures.get(aspect, [])
        return f"{len(found)} {aspect} mismatches, first: {found[:3]}"


def strip_check(text: str) -> str:
    return text.rstrip("+#")


def verify_ply(sweep: Sweep, game: Game, move: str) -> None:
    """Compare the position before ``move``, the move and the position after it with FSF."""
    pos = game.position
    fen = pos.fen()
    ours = {pos.uci(m) for m in pos.legal_moves()}
    theirs = set(pyffish.legal_moves(FSF, fen, []))
    if ours != theirs:
        sweep.fail("legal", f"{fen}: engine only {sorted(ours - theirs)}, FSF only {sorted(theirs - ours)}")
        game.play(move)
        return
    fsf_san = pyffish.get_san(FSF, fen, move)
    record = game.play(move)
    after = game.fen()
    sweep.verified_plies += 1
    fsf_after = pyffish.get_fen(FSF, fen, [move])
    if after != fsf_after:
        sweep.fail("fen", f"{fen} {move}: engine {after}, FSF {fsf_after}")
    if strip_check(record.display) != strip_check(fsf_san):
        sweep.fail("san", f"{fen} {move}: engine {record.display}, FSF {fsf_san}")
    check_after = bool(pyffish.gives_check(FSF, after, []))
    if game.position.is_check() != check_after:
        sweep.fail("check", f"{after}: engine in check {game.position.is_check()}, FSF {check_after}")
    mate = check_after and not pyffish.legal_moves(FSF, after, [])
    suffix = "#" if mate else "+" if check_after else ""
    if record.display != strip_check(record.display) + suffix:
        sweep.fail("san", f"{fen} {move}: engine {record.display}, FSF says check={check_after} mate={mate}")
    if game.outcome() is None and (game.position.halfmove >= 98 or game.claimable_draw()):
        fifty = bool(pyffish.is_optional_game_end(FSF, after, [])[0])
        if fifty != (game.claimable_draw() is Termination.FIFTY_MOVES):
            sweep.fail("claims", f"{after}: engine claim {game.claimable_draw()}, FSF 50-move {fifty}")


def note_features(sweep: Sweep, game: Game, move: str) -> None:
    pos = game.position
    m = pos.move_from_uci(move)
    if m.promotion:
        sweep.count("promotion")
    if pos.board[m.to_sq] and pos.variant.t.royal[abs(pos.board[m.to_sq])]:
        sweep.count("king captured")
    if move in ("e1g1", "e1c1") and abs(pos.board[m.from_sq]) == pos.variant.t.castle_king:
        sweep.count("castling")
    if pos.turn == 1 and len(pos.royals[1]) == 2 and pos.is_check():
        sweep.count("duple check")


def verify_ending(sweep: Sweep, game: Game, start: str) -> None:
    outcome = game.outcome()
    fen = game.fen()
    name = outcome.termination.value if outcome else "unfinished"
    sweep.endings[name] = sweep.endings.get(name, 0) + 1
    if outcome is None:
        return
    if outcome.termination in (Termination.CHECKMATE, Termination.STALEMATE):
        if pyffish.legal_moves(FSF, fen, []):
            sweep.fail("endings", f"{fen}: engine {name}, FSF has moves")
            return
        value = pyffish.game_result(FSF, fen, [])
        mover = Side(game.position.turn)
        expected = 0 if outcome.winner is None else (-VALUE_MATE if outcome.winner is not mover else VALUE_MATE)
        if value != expected:
            sweep.fail("endings", f"{fen}: engine {outcome}, FSF value {value}")
    elif outcome.termination is Termination.REPETITION:
        ended, _ = pyffish.is_optional_game_end(FSF, start, game.moves)
        if not ended:
            sweep.fail("endings", f"{start} {' '.join(game.moves)}: engine 5-fold, FSF sees no repetition")


def sparse_start(rng: random.Random) -> str:
    """The start position with a random part of the non-royal pieces taken off (castling
    rights follow the rooks), so that playouts reach endgames quickly."""
    pos = Position.from_fen(SPARTAN, SPARTAN.start_fen)
    royal = SPARTAN.t.royal
    while True:
        keep = rng.uniform(0.15, 0.7)
        board = tuple(p if not p or royal[abs(p)] or rng.random() < keep else 0 for p in pos.board)
        sparse = Position(SPARTAN, board, pos.hands, 0, pos.castling)
        try:  # the Persian queen may now give duple check with White to move: draw again
            return Position.from_fen(SPARTAN, sparse.fen()).fen()
        except InvalidFenError:
            continue


def run_sweep(games: int, sample: float, seed: int, max_plies: int) -> Sweep:
    """Half the games from the start position, half from sparse starts."""
    sweep = Sweep()
    rng = random.Random(seed)
    for number in range(games):
        start = SPARTAN.start_fen if number % 2 == 0 else sparse_start(rng)
        game = Game(SPARTAN, start)
        while game.outcome() is None and game.ply < max_plies:
            legal = game.legal_moves()
            castles = [m for m in legal if m in ("e1g1", "e1c1") and game.position.board[4] == 1]
            # Random play seldom castles: take a castling move half the times one is there.
            move = rng.choice(castles if castles and rng.random() < 0.5 else legal)
            note_features(sweep, game, move)
            if rng.random() < sample:
                verify_ply(sweep, game, move)
            else:
                game.play(move)
        verify_ending(sweep, game, start)
        sweep.games += 1
    return sweep


@pytest.fixture(scope="module")
def sweep(long_sweep: bool) -> Sweep:
    if long_sweep:
        return run_sweep(games=300, sample=1.0, seed=2, max_plies=500)
    return run_sweep(games=30, sample=0.08, seed=1, max_plies=250)


def test_playouts_cover_the_rules(sweep: Sweep) -> None:
    assert sweep.verified_plies > 300
    for feature in ("promotion", "king captured", "castling", "duple check"):
        assert sweep.seen.get(feature, 0) > 0, (feature, sweep.seen)
    assert sweep.endings.get("checkmate", 0) > 0, sweep.endings


@pytest.mark.parametrize("aspect", ["legal", "check", "fen", "san", "claims", "endings"])
def test_playouts_match_fairy_stockfish(sweep: Sweep, aspect: str) -> None:
    assert not sweep.failures.get(aspect), sweep.report(aspect)

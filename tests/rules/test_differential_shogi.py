"""Mini-Shogi and Sho Shogi checked move by move against Fairy-Stockfish (pyffish 0.0.90).

What is compared (FSF's answer is the expected value everywhere, except for the two
differences below):

* perft trees from the start and from middlegame positions (pieces in hand, promoted pieces,
  check, Crown Prince, a pending mating pawn drop): the legal-move *set* of every inner node;
* legal-move sets along seeded random playouts, some of them biased toward taking back one's
  previous move (to reach 4-fold repetitions) and toward checking (perpetual check);
* the outcome where each playout ends (checkmate, stalemate-as-loss, repetition, perpetual
  check), whether each move gave check, the final position, and the display notation
  (FSF's Hodges output for the whole game);
* hand-made positions for endings the playouts reach only by chance.

Differences the tests accept, each verified every time it shows up, and nothing else:

1. Mini-Shogi (spec §1.5, the spec wins): FSF lists a pawn drop that gives immediate mate
   as a legal move; the engine excludes and rejects it. Accepted only for a pawn drop that
   obeys every other drop rule and, per both FSF and the engine, leaves the opponent in
   check without a legal move.
2. Sho Shogi (spec §2.7, the spec wins): FSF scores perpetual check as a draw; the engine
   makes the checker lose. Accepted only where the engine ends the game by PERPETUAL_CHECK
   and FSF reports a drawn 4-fold repetition at exactly that ply.
3. Sho Shogi, found by this sweep and not yet decided by the spec: promoting the Drunk
   Elephant to Crown Prince while the sole King stays attacked. The engine counts the
   royals after the move (two royals, neither protected: legal); FSF counts them before it
   (a sole King left attacked: illegal). Accepted only for an engine-only move that
   promotes to a royal piece while the mover's single royal is attacked afterwards.
   Playouts never choose such a move, since FSF would reject the rest of the game.

Budget: a pyffish call costs about 2.4 ms here, so the CI sweep compares every ply that is
in check or ends a game and a seeded share of the others. ``--long`` compares every ply of
many more and longer games and perfts one ply deeper (run it with ``--timeout=0``: the
deeper perfts take longer than the suite's per-test timeout).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import random
import re
from collections import Counter
from dataclasses import dataclass, field

import pyffish
import pytest
from fsf_oracle import FSF_NAMES, Oracle, position_fields, walk_tree, winner_from_value

from server.rules import (
    Game,
    IllegalMoveError,
    Move,
    Outcome,
    Position,
    Side,
    Termination,
    Variant,
    get_variant,
)
from server.rules.position import NULL_SQUARE

VARIANTS = ("minishogi", "shoshogi")
SEEDS = {"minishogi": 1105, "shoshogi": 2207}


@dataclass(frozen=True)
class Budget:
    """How much of the sweep to run for one variant."""

    games: int
    max_plies: int
    sample: float  # share of ordinary plies whose legal-move set is compared
    check_sample: float  # share of non-checking moves whose "no check" is confirmed by FSF
    start_depth: int
    middle_depth: int
    middle_positions: int


CI_BUDGET = {
    "minishogi": Budget(games=240, max_plies=160, sample=0.25, check_sample=0.03, start_depth=3, middle_depth=2, middle_positions=8),
    "shoshogi": Budget(games=240, max_plies=220, sample=0.12, check_sample=0.02, start_depth=3, middle_depth=2, middle_positions=6),
}
LONG_BUDGET = {
    "minishogi": Budget(games=3000, max_plies=400, sample=1.0, check_sample=1.0, start_depth=4, middle_depth=3, middle_positions=30),
    "shoshogi": Budget(games=1500, max_plies=600, sample=1.0, check_sample=1.0, start_depth=4, middle_depth=3, middle_positions=20),
}


def budget(name: str, long_sweep: bool) -> Budget:
    return (LONG_BUDGET if long_sweep else CI_BUDGET)[name]


# ------------------------------------------------------------------ named differences


def is_mating_pawn_drop(oracle: Oracle, root: str, path: tuple[str, ...], pos: Position, move: str) -> bool:
    """Difference 1: ``move`` is a drop of a no-drop-mate piece (the pawn) that obeys every
    other drop rule and mates at once, per the engine and per FSF; and the engine rejects it."""
    variant = pos.variant
    if not variant.t.no_drop_mate or "@" not in move:
        return False
    m = pos.parse_uci(move)
    if m.drop not in variant.t.no_drop_mate or m not in pos.pseudo_legal_moves():
        return False
    after = pos.play(m)
    engine_mate = not after.checked(pos.turn) and after.is_check() and not after.has_legal_move()
    if not engine_mate:
        return False
    with pytest.raises(IllegalMoveError, match="would give mate"):
        pos.move_from_uci(move)
    fsf_path = (*path, move)
    return not oracle.legal_moves(root, fsf_path) and oracle.in_check(root, fsf_path)


def is_sho_perpetual_draw(variant: Variant, ours: Outcome, fsf_ended: bool, fsf_value: int) -> bool:
    """Difference 2: Sho Shogi perpetual check, which FSF scores as a plain draw."""
    return (
        variant.name == "shoshogi"
        and ours.termination is Termination.PERPETUAL_CHECK
        and fsf_ended
        and fsf_value == 0
    )


def is_royal_promotion_into_attack(pos: Position, move: str) -> bool:
    """Difference 3: an engine-legal promotion to a royal piece (Crown Prince) made while the
    mover has a single royal that is attacked after the move."""
    if not move.endswith("+"):
        return False
    m = pos.parse_uci(move)
    t = pos.variant.t
    royals = pos.royals[pos.turn]
    if not (t.royal[m.promotion] and len(royals) == 1 and pos.is_legal(m)):
        return False
    return pos.play(m).attacked(royals[0], 1 - pos.turn)


def named_difference(oracle: Oracle, root: str, path: tuple[str, ...], pos: Position, move: str, fsf_only: bool) -> str | None:
    """The name of the documented difference that explains ``move`` (listed by FSF only, or by
    the engine only), or None."""
    if fsf_only:
        return "mating pawn drop" if is_mating_pawn_drop(oracle, root, path, pos, move) else None
    return "royal promotion into attack" if is_royal_promotion_into_attack(pos, move) else None


# ------------------------------------------------------------------------ perft


def oracle_for(variant: Variant) -> Oracle:
    return Oracle(FSF_NAMES[variant.name])


def engine_perft(pos: Position, depth: int) -> int:
    if depth == 0:
        return 1
    moves = pos.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(engine_perft(pos.play(m), depth - 1) for m in moves)


@pytest.mark.parametrize("name", VARIANTS)
def test_perft_from_start(name: str, long_sweep: bool) -> None:
    """Every inner node of the start position's perft tree has exactly FSF's legal-move set,
    so the perft counts are equal."""
    variant = get_variant(name)
    oracle = oracle_for(variant)
    start = Position.from_fen(variant, variant.start_fen)
    depth = budget(name, long_sweep).start_depth
    report = walk_tree(oracle, start, depth, lambda p, path, m, fsf_only: False)
    assert report.shared_leaves == engine_perft(start, depth)
    assert report.nodes_compared > 1


def has_promoted_piece(pos: Position) -> bool:
    return any(p and pos.variant.t.types[abs(p)].is_promoted for p in pos.board)


def has_hand(pos: Position) -> bool:
    return any(any(hand) for hand in pos.hands)


def has_two_royals(pos: Position) -> bool:
    return len(pos.royals[pos.turn]) > 1 or len(pos.royals[1 - pos.turn]) > 1


def pending_mating_drop(pos: Position) -> bool:
    """A pawn drop that would mate is available (the engine excludes it, FSF lists it)."""
    no_mate = pos.variant.t.no_drop_mate
    if not no_mate:
        return False
    for m in pos.pseudo_legal_moves():
        if m.drop in no_mate:
            after = pos.play(m)
            if not after.checked(pos.turn) and after.is_check() and not after.has_legal_move():
                return True
    return False


MIDDLE_KINDS = {
    "promoted piece and pieces in hand": lambda p: has_promoted_piece(p) and has_hand(p),
    "in check": lambda p: p.is_check(),
    "promoted piece": has_promoted_piece,
    "pieces in hand, second player to move": lambda p: has_hand(p) and p.turn == 1,
    "mating pawn drop pending": pending_mating_drop,
    "Crown Prince beside the King": has_two_royals,
}


def middlegame_positions(variant: Variant, count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` (kind, FEN) pairs from seeded random playouts, cycling through the kinds that
    apply to the variant, each taken at least 12 plies into a game."""
    rng = random.Random(seed)
    kinds = [k for k in MIDDLE_KINDS if variant.drops is not None or ("hand" not in k and "drop" not in k)]
    if variant.name != "shoshogi":
        kinds.remove("Crown Prince beside the King")
    wanted = [kinds[i % len(kinds)] for i in range(count)]
    found: list[tuple[str, str]] = []
    for _ in range(5000):
        if not wanted:
            break
        game = Game(variant)
        target = rng.randrange(12, 160)
        while game.outcome() is None and game.ply < target:
            game.play(rng.choice(game.legal_moves()))
            pos = game.position
            if game.ply >= 12 and game.outcome() is None and MIDDLE_KINDS[wanted[0]](pos):
                found.append((wanted.pop(0), game.fen()))
                break
    assert not wanted, f"no position found for {wanted}"
    return found


@pytest.mark.parametrize("name", VARIANTS)
def test_perft_from_middlegame(name: str, long_sweep: bool) -> None:
    """Perft trees from middlegame positions (hands, promotions, checks, Crown Prince, a
    pending mating pawn drop) match FSF node by node, apart from the named differences; in
    Mini-Shogi the mating-drop difference shows up and is verified."""
    variant = get_variant(name)
    plan = budget(name, long_sweep)
    oracle = oracle_for(variant)
    found: Counter[str] = Counter()
    for _kind, fen in middlegame_positions(variant, plan.middle_positions, SEEDS[name]):
        pos = Position.from_fen(variant, fen)

        def tolerate(p: Position, path: tuple[str, ...], move: str, fsf_only: bool, fen: str = fen) -> bool:
            difference = named_difference(oracle, fen, path, p, move, fsf_only)
            found[difference or "unexplained"] += 1
            return difference is not None

        report = walk_tree(oracle, pos, plan.middle_depth, tolerate)
        assert report.nodes_compared > 1 and report.shared_leaves > 0
    if variant.t.no_drop_mate:
        assert found["mating pawn drop"] > 0, "the mating-pawn-drop difference never showed up"


# ------------------------------------------------------- the one-move check, engine vs engine


def candidate_moves(pos: Position, rng: random.Random) -> set[Move]:
    """Moves to put to the one-move check: every pseudo-legal move, each with the promotion
    flag toggled, every drop of every piece type on every square, and random board moves."""
    t = pos.variant.t
    size = len(pos.board)
    out = set(pos.pseudo_legal_moves())
    for m in list(out):
        if m.from_sq >= 0:
            code = abs(pos.board[m.from_sq])
            out.add(Move(m.from_sq, m.to_sq, 0 if m.promotion else t.promote[code]))
    if pos.variant.drops is not None:
        out |= {Move(NULL_SQUARE, s, 0, code) for code in range(1, t.n + 1) for s in range(size)}
    out |= {Move(rng.randrange(size), rng.randrange(size), rng.choice((0, 0, 2))) for _ in range(60)}
    return out


@pytest.mark.parametrize("name", VARIANTS)
def test_one_move_check_agrees_with_the_legal_list(name: str) -> None:
    """The single-move check (``Position.is_legal``, used by ``Game.play``) accepts exactly the
    moves of the full legal list, which the tests above hold against FSF; so does
    ``legal_moves_from``. Each query runs on a fresh position (nothing cached)."""
    variant = get_variant(name)
    rng = random.Random(SEEDS[name] + 7)
    positions = 0
    for _ in range(8):
        game = Game(variant)
        while game.outcome() is None and game.ply < 120:
            if rng.random() < 0.2:
                p = game.position
                fen = p.fen()

                def fresh(p: Position = p) -> Position:
                    return Position(variant, p.board, p.hands, p.turn, p.castling, p.ep, p.halfmove, p.fullmove)

                legal = set(fresh().legal_moves())
                rejected = []
                for m in candidate_moves(fresh(), rng):
                    assert fresh().is_legal(m) == (m in legal), (fen, m)
                    if m not in legal and (m.drop or p.board[m.from_sq]):
                        rejected.append(p.uci(m))
                for uci in rejected[:5]:  # through Game.play: an error, and nothing changes
                    with pytest.raises(IllegalMoveError):
                        game.play(uci)
                    assert game.fen() == fen
                by_square = fresh()
                for sq in range(len(p.board)):
                    assert set(by_square.legal_moves_from(sq)) == {m for m in legal if m.from_sq == sq}, (fen, sq)
                positions += 1
            game.play(rng.choice(game.legal_moves()))
    assert positions > 30


# --------------------------------------------------------------------- playouts


@dataclass(frozen=True)
class Style:
    """How a playout picks its moves."""

    name: str
    undo: float = 0.0  # chance to take back one's own previous move, when that is legal
    checker: Side | None = None  # this side prefers checking moves ...
    check: float = 0.0  # ... with this probability


STYLES = (
    Style("random"),
    Style("shuffle", undo=0.7),
    Style("first player checks", undo=0.6, checker=Side.FIRST, check=0.9),
    Style("second player checks", undo=0.6, checker=Side.SECOND, check=0.9),
)
_BOARD_MOVE = re.compile(r"^([a-o]\d+)([a-o]\d+)\+?$")


def undo_of(uci: str) -> str | None:
    """The move that takes ``uci`` back (board moves only; a promotion stays promoted)."""
    m = _BOARD_MOVE.match(uci)
    return m.group(2) + m.group(1) if m else None


def choose(game: Game, rng: random.Random, style: Style) -> str:
    """A seeded move choice; never a move of difference 3, which FSF would not replay."""
    pos = game.position
    moves = [u for u in game.legal_moves() if not is_royal_promotion_into_attack(pos, u)]
    back = undo_of(game.moves[-2]) if game.ply >= 2 else None
    if game.side_to_move is style.checker and rng.random() < style.check:
        checking = [u for u in moves if pos.play(pos.parse_uci(u)).is_check()]
        if checking:
            if back in checking and rng.random() < style.undo:
                return back
            return rng.choice(checking)
    if back is not None and back in moves and rng.random() < style.undo:
        return back
    return rng.choice(moves)


@dataclass
class SweepLog:
    """Everything one variant's playout sweep compared, and every disagreement found."""

    games: int = 0
    plies: int = 0
    legal_compared: int = 0
    checks_compared: int = 0
    checks_given: int = 0
    endings: Counter[str] = field(default_factory=Counter)
    mismatches: dict[str, list[str]] = field(default_factory=dict)
    differences: Counter[str] = field(default_factory=Counter)  # named difference -> times met
    examples: dict[str, str] = field(default_factory=dict)
    calls: int = 0

    def fail(self, kind: str, message: str) -> None:
        self.mismatches.setdefault(kind, []).append(message)

    def tolerate(self, name: str, where: str) -> None:
        self.differences[name] += 1
        self.examples.setdefault(name, where)

    def report(self, kind: str) -> str:
        found = self.mismatches.get(kind, [])
        return f"{len(found)} {kind} mismatches, first ones:\n" + "\n".join(found[:5])


def compare_legal(oracle: Oracle, root: str, game: Game, log: SweepLog) -> None:
    pos = game.position
    path = tuple(game.moves)
    ours = {pos.uci(m) for m in pos.legal_moves()}
    theirs = oracle.legal_moves(root, path)
    log.legal_compared += 1
    where = f"{pos.fen()!r} (ply {game.ply} of {root!r} {' '.join(path)})"
    for move in sorted(ours ^ theirs):
        fsf_only = move in theirs
        name = named_difference(oracle, root, path, pos, move, fsf_only)
        if name is None:
            log.fail("legal", f"{'FSF' if fsf_only else 'engine'}-only {move} at {where}")
        else:
            log.tolerate(name, f"{move} at {where}")


def compare_outcome(oracle: Oracle, root: str, game: Game, log: SweepLog) -> None:
    variant = game.variant
    outcome = game.outcome()
    path = tuple(game.moves)
    mover = game.side_to_move
    where = f"ply {game.ply} of {root!r} {' '.join(path)}"
    log.endings[outcome.termination.value if outcome else "unfinished"] += 1
    if outcome is None or outcome.termination in (Termination.REPETITION, Termination.PERPETUAL_CHECK):
        ended, value = oracle.optional_end(root, path)
        if outcome is None:
            if ended:
                log.fail("outcome", f"FSF ends the game ({value}), the engine does not, at {where}")
            return
        if is_sho_perpetual_draw(variant, outcome, ended, value):
            log.tolerate("perpetual check scored as a draw by FSF", where)
        elif not ended or winner_from_value(value, mover) != outcome.winner:
            log.fail("outcome", f"engine {outcome}, FSF {(ended, value)} at {where}")
        return
    if outcome.termination in (Termination.CHECKMATE, Termination.STALEMATE):
        value = oracle.game_result(root, path)
        in_check = oracle.in_check(root, path)
        if winner_from_value(value, mover) != outcome.winner or in_check != (outcome.termination is Termination.CHECKMATE):
            log.fail("outcome", f"engine {outcome}, FSF value {value} in check {in_check} at {where}")
        return
    log.fail("outcome", f"unexpected ending {outcome} at {where}")


def playout(variant: Variant, oracle: Oracle, rng: random.Random, sampler: random.Random, style: Style, plan: Budget, log: SweepLog) -> None:
    """One seeded game, compared with FSF at sampled plies and at its end."""
    game = Game(variant)
    root = game.start_fen
    seen: Counter[tuple[str, ...]] = Counter()
    automatic = variant.repetition.automatic
    while True:
        pos = game.position
        identity = position_fields(game.fen())
        seen[identity] += 1
        if game.repetitions() != seen[identity]:
            log.fail("repetition", f"engine counts {game.repetitions()}, FEN count {seen[identity]} at ply {game.ply} of {root!r} {' '.join(game.moves)}")
        outcome = game.outcome()
        final = outcome is not None or game.ply >= plan.max_plies
        if final or pos.is_check() or sampler.random() < plan.sample:
            compare_legal(oracle, root, game, log)
        if game.ply and (pos.is_check() or sampler.random() < plan.check_sample):
            log.checks_compared += 1
            if oracle.in_check(root, game.moves) != pos.is_check():
                log.fail("check", f"engine says check={pos.is_check()} after {game.moves[-1]} at ply {game.ply} of {root!r} {' '.join(game.moves)}")
        if outcome is None and seen[identity] == automatic - 1:
            ended, value = oracle.optional_end(root, game.moves)
            if ended:
                log.fail("outcome", f"FSF ends at the {automatic - 1}th occurrence ({value}) at ply {game.ply} of {root!r} {' '.join(game.moves)}")
        if final:
            compare_outcome(oracle, root, game, log)
            break
        log.checks_given += game.play(choose(game, rng, style)).gives_check
    log.games += 1
    log.plies += game.ply
    if position_fields(oracle.fen(root, game.moves)) != position_fields(game.fen()):
        log.fail("position", f"final FEN {game.fen()!r}, FSF {oracle.fen(root, game.moves)!r}")
    theirs = oracle.notation(root, game.moves, pyffish.NOTATION_SHOGI_HODGES)
    for ply, (ours, fsf) in enumerate(zip(game.displays, theirs, strict=True), 1):
        if ours != fsf:
            log.fail("notation", f"ply {ply} {game.moves[ply - 1]}: engine {ours}, FSF {fsf} ({root!r} {' '.join(game.moves[:ply])})")


def run_sweep(name: str, long_sweep: bool) -> SweepLog:
    """One variant's whole playout sweep (a top-level function, so a worker process can run it)."""
    variant = get_variant(name)
    plan = budget(name, long_sweep)
    oracle = oracle_for(variant)
    log = SweepLog()
    rng = random.Random(SEEDS[name])
    sampler = random.Random(SEEDS[name] + 1)
    for i in range(plan.games):
        playout(variant, oracle, rng, sampler, STYLES[i % len(STYLES)], plan, log)
    log.calls = oracle.calls
    return log


# The sweeps run in the fixtures' setup: minutes under load, hours with --long. Time only
# the test functions (quick checks of the sweep's log); the sweep itself is bounded by its
# budget of games and plies.
SWEEP_TIMEOUT = pytest.mark.timeout(120, func_only=True)


@pytest.fixture(scope="module")
def sweeps(long_sweep: bool) -> dict[str, SweepLog]:
    """Every variant's playout sweep, each run once and in full. They are independent and
    CPU-bound (mostly pyffish calls, which hold the GIL), so the last one runs in a spawned
    worker process while this process runs the others: the same games and comparisons, in
    about the wall time of the longest sweep instead of the sum. ``spawn`` (not ``fork``): the
    test process may hold threads and event loops left by earlier tests."""
    context = multiprocessing.get_context("spawn")
    *here, there = VARIANTS
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        remote = pool.submit(run_sweep, there, long_sweep)
        logs = {name: run_sweep(name, long_sweep) for name in here}
        logs[there] = remote.result()
    return logs


@pytest.fixture(scope="module", params=VARIANTS)
def sweep(request: pytest.FixtureRequest, sweeps: dict[str, SweepLog]) -> tuple[Variant, SweepLog]:
    """One variant's playout sweep; the tests below each check one aspect of it."""
    return get_variant(request.param), sweeps[request.param]


@SWEEP_TIMEOUT
def test_playout_legal_moves(sweep: tuple[Variant, SweepLog]) -> None:
    """Along the playouts, the engine's legal-move sets are FSF's (less the mating pawn drops)."""
    _, log = sweep
    assert log.legal_compared > log.games
    assert "legal" not in log.mismatches, log.report("legal")


@SWEEP_TIMEOUT
def test_playout_outcomes(sweep: tuple[Variant, SweepLog]) -> None:
    """Each playout ends where FSF says and with FSF's result; repetitions are counted right;
    the sweep reaches checkmate and repetition (in Mini-Shogi also stalemate and perpetual
    check; in Sho Shogi those are rare in random play and covered by hand-made positions)."""
    variant, log = sweep
    assert "repetition" not in log.mismatches, log.report("repetition")
    assert "outcome" not in log.mismatches, log.report("outcome")
    expected = {"checkmate", "repetition"}
    if variant.name == "minishogi":
        expected |= {"stalemate", "perpetual_check"}
    assert expected <= set(log.endings), log.endings


@SWEEP_TIMEOUT
def test_playout_checks(sweep: tuple[Variant, SweepLog]) -> None:
    """Every checking move and a sample of the others: FSF agrees whether the move gave check."""
    _, log = sweep
    assert log.checks_given > 0
    assert "check" not in log.mismatches, log.report("check")


@SWEEP_TIMEOUT
def test_playout_positions_and_notation(sweep: tuple[Variant, SweepLog]) -> None:
    """FSF accepts every game, reaches the same final position, and writes the same Hodges
    notation for every move (origin only when ambiguous, ``=`` for a declined promotion)."""
    _, log = sweep
    assert "position" not in log.mismatches, log.report("position")
    assert "notation" not in log.mismatches, log.report("notation")


@SWEEP_TIMEOUT
def test_playout_differences_are_the_named_ones(sweep: tuple[Variant, SweepLog]) -> None:
    """The only disagreements are the documented ones (see the module docstring), and the
    sweep meets those it is expected to meet."""
    variant, log = sweep
    assert not log.mismatches, {kind: found[:3] for kind, found in log.mismatches.items()}
    allowed = {
        "minishogi": {"mating pawn drop"},
        "shoshogi": {"perpetual check scored as a draw by FSF", "royal promotion into attack"},
    }[variant.name]
    assert set(log.differences) <= allowed, log.examples
    if variant.name == "minishogi":
        assert log.differences["mating pawn drop"] > 0, "no mating pawn drop met: the sweep lost its coverage"
    else:
        assert log.differences["perpetual check scored as a draw by FSF"] == log.endings["perpetual_check"]


# ------------------------------------------------------------------ hand-made endings

MINI_START = get_variant("minishogi").start_fen
SHO_START = get_variant("shoshogi").start_fen
HANDMADE = [
    # endings the playouts meet only by chance: (variant, start FEN, moves), named
    pytest.param("minishogi", "4k/5/4R/5/K4[] b - - 0 1", "e5d5 e3d3 d5e5 d3e3 " * 3, id="mini-perpetual-by-sente"),
    pytest.param("minishogi", "4k/5/r4/5/K4[] w - - 0 1", "a1b1 a3b3 b1a1 b3a3 " * 3, id="mini-perpetual-by-gote"),
    pytest.param("minishogi", MINI_START, "a1b2 e5d4 b2a1 d4e5 " * 3, id="mini-repetition"),
    pytest.param("minishogi", "4k/5/4G/5/K2R1[] b - - 0 1", "", id="mini-stalemate"),
    pytest.param("shoshogi", "4k4/9/9/9/4R4/9/9/9/K8 b - - 0 1", "e9d9 e5d5 d9e9 d5e5 " * 3, id="sho-perpetual"),
    pytest.param("shoshogi", SHO_START, "e1d2 e9d8 d2e1 d8e9 " * 3, id="sho-repetition"),
    pytest.param("shoshogi", "8k/9/8G/9/9/9/9/9/K6R1 b - - 0 1", "", id="sho-stalemate"),
]


@pytest.mark.parametrize(("name", "fen", "moves"), HANDMADE)
def test_handmade_endings(name: str, fen: str, moves: str) -> None:
    """Perpetual check, plain repetition and stalemate: the outcome is FSF's, except that a
    Sho Shogi perpetual check is lost by the checker (FSF: draw)."""
    variant = get_variant(name)
    oracle = oracle_for(variant)
    game = Game(variant, fen)
    for uci in moves.split():
        assert game.outcome() is None
        game.play(uci)
    outcome = game.outcome()
    assert outcome is not None
    if game.ply:
        assert game.legal_moves() == []
    log = SweepLog()
    compare_outcome(oracle, fen, game, log)
    assert not log.mismatches, log.mismatches
    if variant.name == "shoshogi" and outcome.termination is Termination.PERPETUAL_CHECK:
        assert log.differences["perpetual check scored as a draw by FSF"] == 1
        checker = game.position_at(1).turn  # sente made the checking moves 2, 4, ...
        assert outcome.winner is Side(checker).other
    else:
        assert not log.differences


def test_mating_pawn_drop_is_the_only_extra_fsf_move() -> None:
    """A position where FSF lists a mating pawn drop: it is the only difference, FSF scores
    the result as a win for the mated side, and the engine rejects the drop."""
    variant = get_variant("minishogi")
    oracle = oracle_for(variant)
    fen = "1+P+Rsk/5/K1+bG1/1r3/1g1+bs[P] w - - 6 92"
    game = Game(variant, fen)
    log = SweepLog()
    compare_legal(oracle, fen, game, log)
    assert not log.mismatches, log.mismatches
    assert log.differences == Counter({"mating pawn drop": 1})
    assert log.examples["mating pawn drop"].startswith("P@e4 ")
    assert oracle.game_result(fen, ["P@e4"]) > 0  # FSF: the side "mated" by the drop wins
    with pytest.raises(IllegalMoveError, match="would give mate"):
        game.play("P@e4")
    assert game.ply == 0

"""The Mini-Shogi and Sho Shogi differential sweep against Fairy-Stockfish, shared by
test_differential_shogi.py (the playouts, hand-made endings) and
test_differential_shogi_legal_moves.py (perft trees, the one-move check): the budgets, the
named differences (listed in test_differential_shogi.py's docstring), the playout styles, and
the comparisons of one position or one game with FSF, logged in a SweepLog.

``run_sweep`` is a top-level function of this module so that a spawned worker process can
import and run it.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field

import pyffish
import pytest
from fsf_oracle import FSF_NAMES, Oracle, position_fields, winner_from_value

from server.rules import (
    Game,
    IllegalMoveError,
    Outcome,
    Position,
    Side,
    Termination,
    Variant,
    get_variant,
)

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


def oracle_for(variant: Variant) -> Oracle:
    return Oracle(FSF_NAMES[variant.name])


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

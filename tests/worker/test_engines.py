"""The real engines through their drivers: a few moves in every variant each one serves, our
moves and positions read the same by the engine (its own legal-move list), and failures."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from pathlib import Path
from typing import ClassVar

import pytest

from server.rules import Game, get_variant
from server.worker.cecp import CecpEngine, parse_thinking
from server.worker.computer import Computer, MoveAnswer, fallback_move, game_of
from server.worker.dialects import DIALECTS, PROGRAMS, EngineProgram, dialect_for, resolve_token
from server.worker.levels import think_limits
from server.worker.search import EngineClock, SearchLimits
from server.worker.uci import UciEngine, parse_info

from .engines_helpers import fsf_legal, random_positions, sjaak_legal, wrapper

pytestmark = pytest.mark.timeout(180)  # bounds on events, generous for a loaded machine


def test_the_engines_are_installed() -> None:
    missing = [p.path for p in PROGRAMS.values() if not os.access(p.path, os.X_OK)]
    assert not missing, f"missing engines (run scripts/system-deps.sh): {missing}"


async def test_a_missing_engine_binary_is_an_engine_failure_and_the_move_still_comes() -> None:
    computer = Computer(
        programs={"sjaakii": EngineProgram("sjaakii", "/nonexistent/sjaakii", "cecp")}
    )
    try:
        game = game_of("shoshogi", None, "")
        answer = await computer.best_move(game, 1)
        assert answer.fallback == "engine_failed" and answer.move in game.legal_moves()
    finally:
        await computer.close()


@pytest.mark.parametrize(("variant", "engine"), sorted(DIALECTS))
async def test_each_engine_plays_legal_moves_in_each_variant_it_serves(
    variant: str, engine: str
) -> None:
    computer = Computer(engines={variant: engine})
    try:
        game = Game(get_variant(variant))
        for _ in range(4):
            answer = await computer.best_move(game, 2)
            assert answer.fallback is None, (answer.engine_move, game.moves)
            assert answer.move in game.legal_moves()
            game.play(answer.move)
        assert not computer.fallbacks
    finally:
        await computer.close()


CORNERS = {
    # pawn-drop mate forbidden (P@a4), nifu, a pawn that must promote
    "minishogi": [
        "kr3/1p3/G4/5/4K[P] w - - 0 1",
        "4k/4p/5/P4/K4[Pp] w - - 0 1",
        "4k/P4/5/5/K4[] w - - 0 1",
    ],
    # King and Crown Prince: neither is protected (model M2), the king may step into attack
    "shoshogi": ["4k4/9/9/9/9/9/4r4/9/3+E1K3 w - - 0 1", "4k4/9/9/9/4E4/9/9/9/4K4 w - - 0 1"],
    # two Spartan kings (duple check); a hoplite promoting with one king and with two
    "spartan": [
        "3kk3/8/8/8/8/8/8/3RK3 b - - 0 1",
        "k7/8/8/8/8/8/7h/4K3 b - - 0 1",
        "kk6/8/8/8/8/8/7h/4K3 b - - 0 1",
    ],
    "wildcastle": ["r2k3r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R2K3R w KQkq - 0 1"],
}


UCHIFUZUME = "kr3/1p3/G4/5/4K[P] w - - 0 1"
ENGINE_ONLY = {UCHIFUZUME: {"P@a4"}}
"""Moves an engine lists that the spec forbids: both Sjaak II 1.4.1 and Fairy-Stockfish 11.1
list the mating pawn drop P@a4 (uchifuzume) in Mini-Shogi."""


@pytest.mark.parametrize("variant", ["minishogi", "shoshogi", "spartan", "wildcastle"])
async def test_sjaak_lists_the_same_legal_moves_as_our_rules(variant: str) -> None:
    """Sjaak II's move list, read back through the dialect, is ours — except where the spec
    and Sjaak differ (d-file castling in Wild Castle): those are named."""
    engine = CecpEngine([PROGRAMS["sjaakii"].path], name="sjaakii")
    await engine.start()
    try:
        v = get_variant(variant)
        fens = [v.start_fen, *random_positions(variant, 6, 40, seed=7), *CORNERS[variant]]
        for fen in fens:
            game = Game(v, fen)
            ours = set(game.legal_moves())
            theirs = await sjaak_legal(engine, variant, fen)
            read = {resolve_token(game.position, t) for t in theirs}
            unread = [t for t in theirs if resolve_token(game.position, t) is None]
            if variant == "wildcastle" and any(t.startswith("O-O") for t in theirs):
                # Sjaak castles a d-file king the Chess960 way (to g1 / c1): not the spec's move
                unread = [t for t in unread if not t.startswith("O-O")]
                ours = {
                    m
                    for m in ours
                    if not (m[0] == "d" and m[1] in "18" and m[2] in "bf" and m[1] == m[3])
                }
                read.discard(None)
                read = {m for m in read if m in ours}
            assert set(unread) == ENGINE_ONLY.get(fen, set()), (fen, unread)
            read.discard(None)
            assert read == ours, (fen, sorted(ours - read), sorted(read - ours))
    finally:
        await engine.close()


@pytest.mark.parametrize(
    ("variant", "fsf_variant"), [("minishogi", "minishogi"), ("wildcastle", None)]
)
async def test_fairy_stockfish_lists_our_legal_moves_exactly(
    variant: str, fsf_variant: str | None
) -> None:
    engine = UciEngine([PROGRAMS["fairy-stockfish"].path], name="fairy-stockfish")
    await engine.start()
    try:
        v = get_variant(variant)
        dialect = dialect_for(variant, "fairy-stockfish")
        fens = [v.start_fen, *random_positions(variant, 8, 40, seed=11), *CORNERS[variant]]
        if variant == "wildcastle":
            fens += [
                "rbbknnqr/pppppppp/8/8/8/8/PPPPPPPP/RBBKNNQR w KQkq - 0 1",
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            ]
        for fen in fens:
            game = Game(v, fen)
            name = fsf_variant or dialect.position(game).variant
            assert name is not None
            theirs = await fsf_legal(engine, name, fen)
            theirs = [t for t in theirs if t not in ENGINE_ONLY.get(fen, set())]
            assert {dialect.from_engine(game.position, t) for t in theirs} == set(
                game.legal_moves()
            ), fen
            assert sorted(theirs) == game.legal_moves(), (
                fen
            )  # the same texts: no translation needed
    finally:
        await engine.close()


async def test_hachu_accepts_our_dai_shogi_moves_and_we_accept_its() -> None:
    """A Dai Shogi game between HaChu and our rules: each HaChu move is legal here, and HaChu
    takes every move of the game (ours included, Lion moves among them) without complaint."""
    engine = CecpEngine([PROGRAMS["hachu"].path], name="hachu")
    await engine.start()
    try:
        game = Game(get_variant("daishogi"))
        dialect = dialect_for("daishogi")
        rng = random.Random(3)
        for ply in range(16):
            if ply % 2:
                legal = game.legal_moves()
                lion = [m for m in legal if "," in m]
                game.play(rng.choice(lion) if lion else rng.choice(legal))
                continue
            result = await engine.search(
                dialect.position(game), SearchLimits(movetime_ms=60, depth=2, deadline_ms=5000)
            )
            ours = dialect.from_engine(game.position, result.bestmove)
            assert ours is not None, result.bestmove
            game.play(ours)
        # the whole game, read by HaChu: a ping answers only after every move was taken
        engine.process.send("new", "variant dai", "force", *[f"usermove {m}" for m in game.moves])
        seen = await engine._sync(time.monotonic() + 5)
        assert not [line for line in seen if line.startswith(("Illegal", "Error"))], seen
    finally:
        await engine.close()


def refusals(lines: list[str]) -> list[str]:
    return [
        line for line in lines if line.startswith(("Illegal", "Error")) or "tellusererror" in line
    ]


def lion_positions(count: int, seed: int) -> list[list[str]]:
    """Move lists of seeded random Dai Shogi games that reach a position with multi-leg
    (Lion) moves among the legal ones, captures preferred so that pieces meet."""
    rng = random.Random(seed)
    found: list[list[str]] = []
    while len(found) < count:
        game = Game(get_variant("daishogi"))
        for _ in range(120):
            legal = game.legal_moves()
            if not legal:
                break
            if any("," in m for m in legal):
                found.append(list(game.moves))
                break
            captures = (
                [m for m in legal if game.position.is_capture(game.position.legal_by_text()[m])]
                if "@@@@" not in legal
                else []
            )
            game.play(
                rng.choice(captures) if captures and rng.random() < 0.7 else rng.choice(legal)
            )
    return found


@pytest.mark.parametrize(
    ("engine", "variant"),
    [
        ("sjaakii", "minishogi"),
        ("sjaakii", "shoshogi"),
        ("sjaakii", "spartan"),
        ("hachu", "daishogi"),
    ],
)
async def test_the_engine_accepts_every_legal_move_of_ours(engine: str, variant: str) -> None:
    """Our move texts (Lion double moves, igui and the pass included in Dai Shogi) go to the
    engine unchanged, and it takes each one: ``usermove``/move, ``ping``, ``undo``."""
    driver = CecpEngine([PROGRAMS[engine].path], name=engine)
    await driver.start()
    dialect = dialect_for(variant, engine)
    try:
        v = get_variant(variant)
        if variant == "daishogi":
            games = [game_of(variant, None, moves) for moves in lion_positions(1, seed=9)]
        else:
            games = [
                Game(v, fen)
                for fen in [
                    v.start_fen,
                    *random_positions(variant, 4, 40, seed=3),
                    *CORNERS[variant],
                ]
            ]
        prefix = "usermove " if driver.features.get("usermove") == "1" else ""
        multi_leg = 0
        for game in games:
            position = dialect.position(game)
            setup = ["new", f"variant {position.variant}", "force"]
            setup += [f"setboard {position.fen}"] if position.fen else []
            driver.process.send(*setup, *[prefix + m for m in position.moves])
            assert not refusals(await driver._sync(time.monotonic() + 10))
            legal = game.legal_moves()
            if (
                variant == "daishogi"
            ):  # every Lion move and the pass, every 8th other (HaChu takes ~10 ms a move)
                legal = [m for i, m in enumerate(legal) if "," in m or "@" in m or i % 8 == 0]
            for move in legal:
                multi_leg += "," in move
                driver.process.send(prefix + move)
                said = refusals(await driver._sync(time.monotonic() + 5))
                assert not said, (game.fen(), move, said)
                driver.process.send("undo")
        assert variant != "daishogi" or multi_leg > 0
    finally:
        await driver.close()


def test_hachu_trailing_comma_step_is_read_as_the_plain_step() -> None:
    start = Game(get_variant("daishogi")).position
    assert resolve_token(start, "g5g6,") == "g5g6"
    assert resolve_token(start, "g5g7,") is None


def test_thinking_and_info_lines_are_parsed() -> None:
    depth, score, ms, nodes, pv = (
        parse_thinking("  5   -25     10      8116  1. Pc4 Pg6 2. Bxh8+ Sxh8 3. Kf2") or (0,) * 5
    )
    assert (depth, score.cp, ms, nodes, pv) == (
        5,
        -25,
        100,
        8116,
        ["Pc4", "Pg6", "Bxh8+", "Sxh8", "Kf2"],
    )
    assert parse_thinking("  7 100003 5 99 ... e2e4")[1].mate == 3  # type: ignore[index]
    assert parse_thinking("# not thinking") is None
    assert parse_thinking("  2  15999      0       122  1. G@a4", mate_score=16000)[1].mate == 1  # type: ignore[index]
    assert parse_thinking("  4 -15996 0 9 a1a2", mate_score=16000)[1].mate == -2  # type: ignore[index]
    info = parse_info(
        "info depth 9 seldepth 12 multipv 1 score mate -2 nodes 1234 nps 1 pv e2e4 e7e5"
    )
    assert (
        info is not None
        and info[0] == 9
        and info[1] is not None
        and info[1].mate == -2
        and info[3] == ["e2e4", "e7e5"]
    )
    assert parse_info("info depth x score cp") is None
    assert parse_info("bestmove e2e4") is None


async def test_a_crashed_engine_is_restarted_and_the_search_answered() -> None:
    computer = Computer()
    try:
        game = game_of("shoshogi", None, "")
        killed = asyncio.Event()

        def kill_on_first_info(_result: object) -> None:
            if not killed.is_set():
                pid = computer._drivers["sjaakii"].process.pid
                assert pid is not None
                os.kill(pid, signal.SIGKILL)
                killed.set()

        entry = await computer.analyse(game, 0, 3000, None, on_info=kill_on_first_info)
        assert killed.is_set()
        assert computer.restarts["sjaakii"] == 1
        assert entry is not None and entry.best in game.legal_moves()
        answer = await computer.best_move(game, 1)  # the restarted engine goes on serving
        assert answer.fallback is None and answer.move in game.legal_moves()
    finally:
        await computer.close()


async def test_a_hung_engine_is_killed_restarted_and_answers(tmp_path: Path) -> None:
    script = wrapper(tmp_path, "sjaak-hang-once", "sjaakii", "hang-once")
    computer = Computer(programs={"sjaakii": EngineProgram("sjaakii", str(script), "cecp")})
    try:
        game = game_of("spartan", None, "e2e4")
        answer = await computer.best_move(game, 1)
        assert computer.restarts["sjaakii"] == 1
        assert answer.fallback is None and answer.move in game.legal_moves()
    finally:
        await computer.close()


async def test_an_engine_that_always_hangs_gets_the_fallback_move_counted(tmp_path: Path) -> None:
    script = wrapper(tmp_path, "fsf-hang", "fairy-stockfish", "hang")
    computer = Computer(
        programs={"fairy-stockfish": EngineProgram("fairy-stockfish", str(script), "uci")}
    )
    try:
        game = game_of("minishogi", None, "")
        answer = await computer.best_move(game, 1)
        assert answer.fallback == "engine_failed"
        assert answer.move in game.legal_moves()
        assert computer.fallbacks["minishogi", "engine_failed"] == 1
        assert computer.restarts["fairy-stockfish"] == 2
    finally:
        await computer.close()


async def test_a_starved_dai_shogi_level_4_keeps_its_depth_and_its_clock(tmp_path: Path) -> None:
    """HaChu at level 4 (depth 3) on a 5-minute clock whose move comes 3 s late — past the
    level's 0.5 s and the old deadline of move time + 1 s (+ 1 s after "?"), which killed it and
    played the fallback: the engine's depth-3 move is played, nothing restarted or counted,
    within the clock's bound."""
    script = wrapper(tmp_path, "hachu-slow", "hachu", "slow-3")
    computer = Computer(programs={"hachu": EngineProgram("hachu", str(script), "cecp")})
    try:
        clock = EngineClock(300_000, 300_000, 0, 0, True)
        answer, limits, spent_ms = await _dai_shogi_engine_move(computer, 4, clock)
        assert answer.result is not None and answer.result.depth == 3
        assert 3000 <= spent_ms < limits.deadline_ms <= 300_000
    finally:
        await computer.close()


async def test_dai_shogi_level_8_searches_the_clocks_budget_within_the_job() -> None:
    """Handed the game's clock, HaChu planned by its own rules: 0.4 s a move on 10 s + 30 s,
    and on 30 min + 30 s more than a move job may take, when, heeding "?" only between
    iterations, it was killed and the move was a 0.2 s retry (docs/engines.md). Level 8 now
    searches the clock's budget as a fixed time whose end HaChu itself keeps before the
    deadline: its own move, no restart, within the budget's bound."""
    computer = Computer()
    try:
        clock = EngineClock(10_000, 10_000, 30_000, 0, True)
        _, limits, spent_ms = await _dai_shogi_engine_move(computer, 8, clock)
        assert spent_ms < limits.deadline_ms <= 10_000
        assert limits.clock is None and limits.movetime_ms is not None
    finally:
        await computer.close()


async def _dai_shogi_engine_move(
    computer: Computer, level: int, clock: EngineClock
) -> tuple[MoveAnswer, SearchLimits, float]:
    """HaChu's first move of a Dai Shogi game at ``level`` on ``clock``, which must be the
    engine's own (no fallback, no restart); its limits and the milliseconds it took."""
    game = game_of("daishogi", None, "")
    limits = think_limits("hachu", level, clock, first_move=True)  # the game's first move
    started = time.monotonic()
    answer = await computer.best_move(game, level, clock)
    spent_ms = (time.monotonic() - started) * 1000
    assert answer.fallback is None and answer.engine_move is not None
    assert answer.move in game.legal_moves()
    assert not computer.fallbacks and not computer.restarts
    return answer, limits, spent_ms


@pytest.mark.parametrize(
    ("variant", "engine", "protocol"),
    [("minishogi", "fairy-stockfish", "uci"), ("shoshogi", "sjaakii", "cecp")],
)
async def test_an_illegal_engine_move_is_never_the_answer(
    tmp_path: Path, variant: str, engine: str, protocol: str
) -> None:
    script = wrapper(tmp_path, f"{engine}-illegal", engine, "illegal")
    computer = Computer(programs={engine: EngineProgram(engine, str(script), protocol)})
    try:
        game = game_of(variant, None, "")
        answer = await computer.best_move(game, 1)
        assert answer.engine_move == "a1a1"
        assert answer.move != "a1a1" and answer.move in game.legal_moves()
        assert answer.fallback == "illegal_move"
        assert computer.fallbacks[variant, "illegal_move"] == 1
    finally:
        await computer.close()


async def test_an_analysis_goes_on_past_a_position_the_engine_refuses(tmp_path: Path) -> None:
    """An engine whose rules forbid a move the spec allows refuses every position after it:
    those plies get no evaluation (counted), the plies before it are analysed, nothing raises
    (a raise gave the job back to fail again and again: found by the beginner bench in Dai
    Shogi, where HaChu refused a position our rules reached)."""
    game = game_of("shoshogi", None, "")
    rng = random.Random(5)
    for _ in range(6):
        game.play(sorted(game.legal_moves())[rng.randrange(len(game.legal_moves()))])
    refused = game.moves[3]
    script = wrapper(tmp_path, "sjaak-refuses", "sjaakii", f"refuse-{refused}")
    computer = Computer(programs={"sjaakii": EngineProgram("sjaakii", str(script), "cecp")})
    try:
        entries = [await computer.analyse(game, ply, 100, None) for ply in range(game.ply + 1)]
        assert [entry is not None for entry in entries] == [True] * 4 + [False] * 3
        assert computer.fallbacks["shoshogi", "analysis_refused"] == 3
        assert all(
            e is not None and e.best in game.position_at(e.ply).legal_by_text() for e in entries[:4]
        )
    finally:
        await computer.close()


async def test_an_analysed_ply_waits_for_the_engines_last_iteration() -> None:
    """A ply analysed at 1.5 s is waited for twice that and a margin (HaChu finishes its last
    iteration up to twice the ply's time: at 5 s a ply the old wait of the time + 2 s restarted
    it in Dai Shogi), and still gets its evaluation."""
    from server.worker.levels import DEADLINE_MARGIN_MS

    class Recording(Computer):
        seen: ClassVar[list[SearchLimits]] = []

        async def _search(self, dialect, position, limits, on_info=None):  # type: ignore[no-untyped-def]
            self.seen.append(limits)
            return await super()._search(dialect, position, limits, on_info)

    computer = Recording()
    try:
        game = game_of("shoshogi", None, "")
        entry = await computer.analyse(game, 0, 1500, None)
        assert entry is not None and entry.best in game.legal_moves()
        (limits,) = computer.seen
        assert limits.movetime_ms == 1500
        assert limits.deadline_ms >= 2 * 1500 + DEADLINE_MARGIN_MS
        assert not computer.restarts
    finally:
        await computer.close()


@pytest.mark.parametrize("engine", ["fairy-stockfish", "sjaakii"])
async def test_a_mating_pawn_drop_the_engine_proposes_is_never_the_answer(engine: str) -> None:
    """No wrapper: the real engines believe P@a4 mates here; the spec forbids it."""
    computer = Computer(engines={"minishogi": engine})
    try:
        game = game_of("minishogi", UCHIFUZUME, "")
        answer = await computer.best_move(game, 7)
        assert answer.move in game.legal_moves() and answer.move != "P@a4"
        if answer.engine_move == "P@a4":
            assert answer.fallback == "illegal_move"
            assert computer.fallbacks["minishogi", "illegal_move"] == 1
    finally:
        await computer.close()


async def test_mate_scores_are_mates_from_the_first_players_view() -> None:
    for engine in ("sjaakii", "fairy-stockfish"):
        computer = Computer(engines={"minishogi": engine})
        try:
            sente_mates = game_of("minishogi", "kr3/1p3/G4/5/4K[G] w - - 0 1", "")
            entry = await computer.analyse(sente_mates, 0, 150, None)
            assert entry is not None and entry.score == {"mate": 1} and entry.best == "G@a4", (
                engine,
                entry,
            )
            # the same, gote to move and about to be mated: still from sente's view
            gote_to_move = game_of("minishogi", "kr3/1p3/G4/5/4K[G] w - - 0 1", "e1d1")
            entry = await computer.analyse(gote_to_move, 1, 150, None)
            assert entry is not None and (
                entry.score.get("mate", 0) > 0 or entry.score.get("cp", 0) > 500
            ), (engine, entry)
        finally:
            await computer.close()


@pytest.mark.parametrize("variant", ["minishogi", "shoshogi", "wildcastle", "spartan", "daishogi"])
async def test_analysis_of_each_variant_gives_legal_best_moves_and_lines(variant: str) -> None:
    computer = Computer()
    try:
        game = Game(get_variant(variant))
        for _ in range(2):
            answer = await computer.best_move(game, 1)
            assert answer.move is not None
            game.play(answer.move)
        for ply in range(game.ply + 1):
            entry = await computer.analyse(game, ply, 50, None)
            assert entry is not None and entry.ply == ply and entry.depth > 0
            assert set(entry.score) in ({"cp"}, {"mate"})
            line = Game(game.variant, game.position_at(ply).fen())
            assert entry.pv and entry.pv[0] == entry.best
            for move in entry.pv:  # the whole line is legal by our rules
                line.play(move)
    finally:
        await computer.close()


async def test_after_an_illegal_move_the_uci_engine_is_asked_again_among_legal_moves(
    tmp_path: Path,
) -> None:
    script = wrapper(tmp_path, "fsf-illegal-once", "fairy-stockfish", "illegal-once")
    computer = Computer(
        programs={"fairy-stockfish": EngineProgram("fairy-stockfish", str(script), "uci")}
    )
    try:
        game = game_of("minishogi", None, "e1e4")
        answer = await computer.best_move(game, 7)
        assert answer.engine_move == "a1a1" and answer.fallback == "illegal_move"
        assert (
            answer.result is not None and answer.move == answer.result.bestmove
        )  # the engine's choice
        assert answer.move in game.legal_moves()
        assert computer.fallbacks["minishogi", "illegal_move"] == 1
    finally:
        await computer.close()


class AlwaysSlip(random.Random):
    def random(self) -> float:
        return 0.0


async def test_hachu_low_levels_slip_and_higher_ones_do_not() -> None:
    computer = Computer(rng=AlwaysSlip(4))
    try:
        game = game_of("daishogi", None, "")
        low = await computer.best_move(game, 1)
        assert low.move in game.legal_moves() and low.fallback is None
        high = await computer.best_move(game, 4)  # no slips from level 4 on
        assert high.move == high.engine_move and high.fallback is None
    finally:
        await computer.close()


def test_the_fallback_mates_when_it_can_else_captures() -> None:
    game = game_of("minishogi", "kr3/1p3/G4/5/4K[G] w - - 0 1", "")
    assert fallback_move(game.position, game.legal_moves()) == "G@a4"
    game = game_of("minishogi", UCHIFUZUME, "")  # the mating pawn drop is not legal: never chosen
    assert fallback_move(game.position, game.legal_moves()) != "P@a4"
    game = game_of("wildcastle", None, "e2e4 d7d5")
    assert fallback_move(game.position, game.legal_moves()) == "e4d5"


async def test_a_finished_game_gets_no_move() -> None:
    computer = Computer()
    try:
        game = game_of("minishogi", "kr3/1p3/G4/5/4K[G] w - - 0 1", "G@a4")
        answer = await computer.best_move(game, 8)
        assert answer.move is None
        assert computer._drivers == {}  # no engine was even started
    finally:
        await computer.close()

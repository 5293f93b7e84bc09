"""``python -m server.rules``: perft, moves, play, batch mode and error handling."""

from __future__ import annotations

import io
import random
import subprocess
import sys
from pathlib import Path

import pyffish as sf
import pytest

from server.rules import VARIANTS, Game, get_variant
from server.rules.cli import main, perft

ROOT = Path(__file__).resolve().parents[2]
MINI_START = "rbsgk/4p/5/P4/KGSBR[] w - - 0 1"
SHO_START = "lnsgkgsnl/1r2e2b1/ppppppppp/9/9/9/PPPPPPPPP/1B2E2R1/LNSGKGSNL w - - 0 1"


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    """Run the CLI in-process; return (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), io.StringIO(stdin), out, err)
    return status, out.getvalue(), err.getvalue()


def assert_bad_input(argv: list[str], *words: str) -> None:
    """Exit status 2, nothing on stdout, one ``error:`` line on stderr naming ``words``."""
    status, out, err = run(*argv)
    assert status == 2, (argv, out, err)
    assert out == ""
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err
    for word in words:
        assert word in err, (word, err)


# ------------------------------------------------------------------------------ perft


@pytest.mark.parametrize(
    ("variant", "depth", "nodes"),
    # Fairy-Stockfish's counts (pyffish 0.0.90 legal_moves, recursively).
    [("minishogi", 1, 14), ("minishogi", 2, 181), ("minishogi", 3, 2512), ("shoshogi", 1, 26), ("shoshogi", 2, 676)],
)
def test_perft_from_the_start(variant: str, depth: int, nodes: int) -> None:
    assert run("perft", variant, str(depth)) == (0, f"{nodes}\n", "")


def test_perft_depth_zero_counts_the_root() -> None:
    assert run("perft", "minishogi", "0") == (0, "1\n", "")


def test_perft_from_a_fen_matches_fairy_stockfish() -> None:
    fen = "rb1gk/1s2R/5/P1B2/K1G2[Psp] b - - 1 4"  # drops for both sides, promotions, checks

    def fsf_perft(moves: list[str], depth: int) -> int:
        legal = sf.legal_moves("minishogi", fen, moves)
        if depth == 1:
            return len(legal)
        return sum(fsf_perft([*moves, m], depth - 1) for m in legal)

    status, out, _ = run("perft", "minishogi", "2", "--fen", fen)
    assert status == 0
    assert int(out) == fsf_perft([], 2)


def test_perft_function_counts_move_paths() -> None:
    game = Game(get_variant("minishogi"))
    first = game.legal_moves()
    total = 0
    for move in first:
        game.play(move)
        total += len(game.legal_moves())
        game.undo()
    assert perft(game.position, 2) == total == 181


# ------------------------------------------------------------------------------ moves


def test_moves_prints_the_sorted_legal_moves_one_a_line() -> None:
    status, out, err = run("moves", "minishogi")
    assert (status, err) == (0, "")
    assert out.splitlines() == sorted(Game(get_variant("minishogi")).legal_moves())
    assert out.splitlines()[:3] == ["a1b2", "a2a3", "b1b2"]


def test_moves_after_a_move_list() -> None:
    status, out, _ = run("moves", "minishogi", "--moves", "e1e4")
    assert status == 0
    assert out.splitlines() == ["d5e4", "e5e4"]
    # Several moves may share one word.
    assert run("moves", "minishogi", "--moves", "e1e4 d5e4", "P@e3")[1] == run(
        "moves", "minishogi", "--moves", "e1e4", "d5e4", "P@e3"
    )[1]


def test_moves_from_a_fen() -> None:
    status, out, _ = run("moves", "minishogi", "--fen", "kr3/1p3/G4/5/4K[P] w - - 0 1")
    assert status == 0
    moves = out.splitlines()
    assert "P@a4" not in moves  # uchifuzume
    assert "P@c3" in moves


def test_moves_prints_nothing_once_the_game_is_over() -> None:
    assert run("moves", "minishogi", "--fen", "kr3/1p3/G4/5/4K[G] w - - 0 1", "--moves", "G@a4") == (0, "", "")


# ------------------------------------------------------------------------------- play


def test_play_prints_fen_termination_and_winner() -> None:
    status, out, err = run("play", "minishogi", "--moves", "e1e4", "d5e4")
    assert (status, err) == (0, "")
    assert out == "rbs1k/4g/5/P4/KGSB1[Pr] w - - 0 2\nnone\nnone\n"


def test_play_reports_checkmate_winner() -> None:
    status, out, _ = run("play", "minishogi", "--fen", "kr3/1p3/G4/5/4K[G] w - - 0 1", "--moves", "G@a4")
    assert status == 0
    assert out.splitlines() == ["kr3/Gp3/G4/5/4K[] b - - 1 1", "checkmate", "first"]


def test_play_reports_repetition_results() -> None:
    shuffle = "b1b2 d5d4 b2b1 d4d5 " * 3
    assert run("play", "minishogi", "--moves", shuffle)[1].splitlines()[1:] == ["repetition", "second"]
    sho = "h2g2 b8c8 g2h2 c8b8 " * 3
    assert run("play", "shoshogi", "--moves", sho)[1].splitlines()[1:] == ["repetition", "draw"]
    perpetual = "a8a9 i9i8 a9a8 i8i9 " * 3
    lines = run("play", "shoshogi", "--fen", "8k/R8/9/9/9/9/9/9/4K4 w - - 0 1", "--moves", perpetual)[1]
    assert lines.splitlines()[1:] == ["perpetual_check", "second"]


def test_play_with_no_moves_prints_the_normalised_start() -> None:
    assert run("play", "minishogi", "--moves")[1] == f"{MINI_START}\nnone\nnone\n"
    assert run("play", "minishogi", "--fen", "rbsgk/4p/5/P4/KGSBR[-] w 0 1", "--moves")[1].startswith(MINI_START)


# -------------------------------------------------------------------------- bad input


def test_unknown_variant() -> None:
    assert_bad_input(["perft", "chess", "1"], "unknown variant 'chess'", "minishogi")
    assert_bad_input(["moves", "chess"], "unknown variant")


@pytest.mark.parametrize("depth", ["x", "-1", "1.5", ""])
def test_bad_depth(depth: str) -> None:
    assert_bad_input(["perft", "minishogi", depth], "depth")


@pytest.mark.parametrize(
    ("fen", "reason"),
    [
        ("5/5", "2 ranks in the board, expected 5"),
        ("rbsgk/4p/5/P4/KGSBX[] w - - 0 1", "unknown piece 'X'"),
        ("rbsg1/4p/5/P4/KGSBR[] w - - 0 1", "no king"),
        ("rbsgk/4p/5/P4/KGSBR[] x - - 0 1", "side to move"),
    ],
)
def test_bad_fen(fen: str, reason: str) -> None:
    for command in (["moves"], ["play", "--moves"], ["perft", "1"]):
        argv = [command[0], "minishogi", *command[1:], "--fen", fen]
        assert_bad_input(argv, "bad FEN", reason)


def test_illegal_and_unparseable_moves_name_the_move() -> None:
    assert_bad_input(["play", "minishogi", "--moves", "e1e4", "e1e2"], "move 2: e1e2: there is no piece on e1")
    assert_bad_input(["moves", "minishogi", "--moves", "hello"], "move 1:", "'hello' is not a move")
    assert_bad_input(
        ["play", "minishogi", "--fen", "kr3/1p3/G4/5/4K[P] w - - 0 1", "--moves", "P@a4"],
        "pawn drop would give mate",
    )
    assert_bad_input(["play", "shoshogi", "--moves", "P@e5"], "there are no drops in Sho Shogi")
    assert_bad_input(
        ["play", "minishogi", "--fen", "kr3/1p3/G4/5/4K[G] w - - 0 1", "--moves", "G@a4", "a5b5"],
        "move 2: a5b5: the game is over",
    )


def test_usage_errors_are_one_line() -> None:
    assert_bad_input([], "required")
    assert_bad_input(["perft", "minishogi"], "required", "depth")
    assert_bad_input(["play", "minishogi"], "--moves")
    assert_bad_input(["fly", "minishogi"], "invalid choice")
    assert_bad_input(["moves", "minishogi", "--seed", "x"], "--seed")


def test_help_exits_zero() -> None:
    status, out, _ = run("--help")
    assert status == 0 and "perft" in out and "moves" in out and "play" in out


# ------------------------------------------------------------------------------ batch


def test_batch_moves_one_line_per_input() -> None:
    lines = [
        "",  # the start
        f"{MINI_START}\te1e4",
        "\te1e4 d5e4",  # empty FEN field: the start
        "kr3/1p3/G4/5/4K[P] w - - 0 1",  # no tab: no moves
        "5/5\t",  # bad FEN: error line, then the rest goes on
        "\te1e4 zz",
        f"{MINI_START}\r",  # a CRLF file
    ]
    status, out, err = run("moves", "minishogi", "--batch", stdin="\n".join(lines) + "\n")
    assert (status, err) == (0, "")
    answers = out.split("\n")
    assert answers[-1] == "" and len(answers) - 1 == len(lines)
    start_moves = " ".join(Game(get_variant("minishogi")).legal_moves())
    assert answers[0] == start_moves
    assert answers[1] == "d5e4 e5e4"
    assert answers[2].split() == run("moves", "minishogi", "--moves", "e1e4", "d5e4")[1].split()
    assert "P@a4" not in answers[3].split() and "P@c3" in answers[3].split()
    assert answers[4] == "error: bad FEN '5/5': 2 ranks in the board, expected 5"
    assert answers[5].startswith("error: move 2: 'zz' is not a move")
    assert answers[6] == start_moves


def test_batch_play_prints_fen_termination_winner() -> None:
    lines = [
        "\te1e4 d5e4",
        "kr3/1p3/G4/5/4K[G] w - - 0 1\tG@a4",
        "\t" + "b1b2 d5d4 b2b1 d4d5 " * 3,
        "\te1e4 e1e3",
    ]
    status, out, _ = run("play", "minishogi", "--batch", stdin="\n".join(lines) + "\n")
    assert status == 0
    assert out.splitlines() == [
        "rbs1k/4g/5/P4/KGSB1[Pr] w - - 0 2\tnone\tnone",
        "kr3/Gp3/G4/5/4K[] b - - 1 1\tcheckmate\tfirst",
        f"{MINI_START.replace(' 0 1', ' 12 7')}\trepetition\tsecond",
        "error: move 2: e1e3: there is no piece on e1",
    ]


def test_batch_uses_fen_option_for_empty_fen_fields() -> None:
    fen = "kr3/1p3/G4/5/4K[P] w - - 0 1"
    status, out, _ = run("moves", "minishogi", "--batch", "--fen", fen, stdin="\n")
    assert status == 0
    assert out == " ".join(Game(get_variant("minishogi"), fen).legal_moves()) + "\n"


def test_batch_with_moves_option_is_refused() -> None:
    assert_bad_input(["moves", "minishogi", "--batch", "--moves", "e1e4"], "--batch", "--moves")


def test_batch_checks_many_positions_in_one_process() -> None:
    """Seeded random walks in both variants: each line is a position and the move played
    from it; the answer must be the Game API's legal moves after that move."""
    rng = random.Random(11)
    for name in ("minishogi", "shoshogi"):
        variant = get_variant(name)
        lines, expected = [], []
        game = Game(variant)
        for _ in range(200):
            if game.outcome() is not None:
                game = Game(variant)
            fen = game.fen()
            move = rng.choice(game.legal_moves())
            game.play(move)
            lines.append(f"{fen}\t{move}")
            expected.append(" ".join(game.legal_moves()))
        status, out, _ = run("moves", name, "--batch", stdin="\n".join(lines) + "\n")
        assert status == 0
        assert out.splitlines() == expected


# ------------------------------------------------------------------ every variant, seed


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_registered_variant_works(name: str) -> None:
    variant = VARIANTS[name]
    game = Game(variant)
    legal = game.legal_moves()
    assert run("perft", name, "1") == (0, f"{len(legal)}\n", "")
    assert run("moves", name)[1].splitlines() == legal
    game.play(legal[0])
    outcome = game.outcome()
    termination = "none" if outcome is None else outcome.termination.value
    assert run("play", name, "--moves", legal[0])[1].splitlines()[:2] == [game.fen(), termination]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_seed_chooses_the_start(name: str) -> None:
    """``--seed N``: setup number N of a numbered generator (Wild Castle), else
    ``random_start_fen(random.Random(N))``; the standard start for fixed-setup variants."""
    variant = VARIANTS[name]
    numbered = getattr(variant.start_fen_generator, "setup_fen", None)
    start = numbered(5) if numbered is not None else variant.random_start_fen(random.Random(5))
    status, out, _ = run("play", name, "--seed", "5", "--moves")
    assert status == 0
    assert out.splitlines()[0] == Game(variant, start).fen()
    assert run("moves", name, "--seed", "5")[1].splitlines() == Game(variant, start).legal_moves()


# ------------------------------------------------------------------- as a real process


def test_module_entry_point() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "server.rules", "perft", "shoshogi", "2"],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "676\n", "")
    bad = subprocess.run(
        [sys.executable, "-m", "server.rules", "moves", "shoshogi", "--fen", "9/9"],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("error: bad FEN '9/9'") and bad.stderr.count("\n") == 1
    batch = subprocess.run(
        [sys.executable, "-m", "server.rules", "play", "shoshogi", "--batch"],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=60,
        input=f"\tc3c4\n{SHO_START}\tP@e5\n",
    )  # fmt: skip
    assert batch.returncode == 0
    assert batch.stdout.splitlines() == [
        "lnsgkgsnl/1r2e2b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B2E2R1/LNSGKGSNL b - - 1 1\tnone\tnone",
        "error: move 1: P@e5: there are no drops in Sho Shogi",
    ]

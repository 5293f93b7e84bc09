"""Command-line access to the adjudicator: perft, legal moves, and playing out a move list.

Every command works for every variant in :data:`server.rules.variants.VARIANTS`::

    python -m server.rules perft minishogi 3
    python -m server.rules moves shoshogi --moves c3c4 g7g6
    python -m server.rules play minishogi --moves e1e4 d5e4
    printf '\\tP@c3\\n' | python -m server.rules moves minishogi --batch

``play`` prints three lines: the final FEN, the termination (``checkmate``, ``repetition``,
... or ``none`` while the game goes on) and the winner (``first``, ``second``, ``draw``, or
``none`` while the game goes on).

With ``--batch`` the command reads lines ``FEN<TAB>M1 M2 ...`` from stdin (the move list may be
empty or the tab left out; an empty FEN field means the start position) and prints one line per
input line: the sorted legal moves separated by spaces for ``moves``, ``FEN<TAB>termination<TAB>
winner`` for ``play``, or ``error: <reason>`` for an input it cannot use.

Bad input on the command line prints one ``error: ...`` line on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from .errors import RulesError
from .game import Game, Outcome
from .position import Position
from .variant import Variant
from .variants import VARIANTS

__all__ = ["CliError", "main", "perft", "result_fields"]

EXIT_BAD_INPUT = 2


class CliError(Exception):
    """Bad command-line input; the message is printed after ``error: ``."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and exit with status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {message} (see --help)\n")
        raise SystemExit(EXIT_BAD_INPUT)


def perft(position: Position, depth: int) -> int:
    """The number of legal move sequences of ``depth`` plies from ``position``.

    Like Fairy-Stockfish's perft, this counts paths in the move tree and ignores endings that
    depend on the game's history (repetition); a position without legal moves is a leaf.
    """
    if depth == 0:
        return 1
    moves = position.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(perft(position.play(m), depth - 1) for m in moves)


def result_fields(outcome: Outcome | None) -> tuple[str, str]:
    """``(termination, winner)`` as the CLI prints them: ``("none", "none")`` while playing."""
    if outcome is None:
        return "none", "none"
    if outcome.winner is None:
        return outcome.termination.value, "draw"
    return outcome.termination.value, outcome.winner.name.lower()


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m server.rules",
        description="Perft, legal moves and move-list adjudication for the hub's variants.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    variants = ", ".join(VARIANTS)

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("variant", help=f"one of: {variants}")
        sub.add_argument("--fen", help="start from this FSF FEN instead of the variant's start")
        sub.add_argument(
            "--seed",
            type=int,
            help="start from setup number SEED of a variant with numbered setups (wildcastle: "
            "0..35), else draw the start with random.Random(SEED)",
        )

    perft_cmd = commands.add_parser("perft", help="count the move tree to DEPTH plies")
    common(perft_cmd)
    perft_cmd.add_argument("depth", help="plies, 0 or more")

    moves_cmd = commands.add_parser("moves", help="print the sorted legal moves, one a line")
    play_cmd = commands.add_parser(
        "play", help="play the moves; print the FEN, the termination and the winner"
    )
    for sub in (moves_cmd, play_cmd):
        common(sub)
        sub.add_argument(
            "--moves",
            nargs="*",
            metavar="M",
            help="moves in wire form (e1e4, c4c5+, P@c3); a word may hold several moves",
        )
        sub.add_argument(
            "--batch",
            action="store_true",
            help="read FEN<TAB>M1 M2 ... lines from stdin, answer one line each",
        )
    return parser


def _variant(name: str) -> Variant:
    variant = VARIANTS.get(name)
    if variant is None:
        raise CliError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}")
    return variant


def _start_fen(variant: Variant, fen: str | None, seed: int | None) -> str:
    """The start the command line asks for: ``--fen``, else the ``--seed`` setup, else standard."""
    if fen:
        return fen
    if seed is not None:
        setup_fen = getattr(variant.start_fen_generator, "setup_fen", None)
        if setup_fen is None:
            return variant.random_start_fen(random.Random(seed))
        try:
            fen_of_setup: str = setup_fen(seed)
        except ValueError as exc:
            raise CliError(f"--seed: {exc}") from None
        return fen_of_setup
    return variant.start_fen


def _new_game(variant: Variant, fen: str) -> Game:
    try:
        return Game(variant, fen)
    except RulesError as exc:
        raise CliError(f"bad FEN {fen!r}: {exc}") from None


def _play_moves(game: Game, moves: Sequence[str]) -> None:
    for number, text in enumerate(moves, 1):
        try:
            game.play(text)
        except RulesError as exc:
            reason = str(exc)
            if not reason.startswith((text, repr(text))):
                reason = f"{text}: {reason}"
            raise CliError(f"move {number}: {reason}") from None


def _split_moves(words: Sequence[str] | None) -> list[str]:
    return [m for word in words or () for m in word.split()]


def _answer(command: str, game: Game, batch: bool) -> str:
    """What ``command`` prints for ``game`` (one line in batch mode)."""
    if command == "moves":
        return (" " if batch else "\n").join(game.legal_moves())
    termination, winner = result_fields(game.outcome())
    return ("\t" if batch else "\n").join((game.fen(), termination, winner))


def _run_batch(
    command: str, variant: Variant, default_fen: str, stdin: TextIO, stdout: TextIO
) -> None:
    for line in stdin:
        fen, _, moves = line.rstrip("\r\n").partition("\t")
        try:
            game = _new_game(variant, fen.strip() or default_fen)
            _play_moves(game, moves.split())
            answer = _answer(command, game, batch=True)
        except CliError as exc:
            answer = f"error: {exc}"
        stdout.write(answer + "\n")
        stdout.flush()


def _run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> None:
    variant = _variant(args.variant)
    default_fen = _start_fen(variant, args.fen, args.seed)
    if args.command == "perft":
        text = args.depth.strip()
        if not text.isdigit():
            raise CliError(f"depth must be a whole number of plies (0 or more), not {args.depth!r}")
        game = _new_game(variant, default_fen)
        stdout.write(f"{perft(game.position, int(text))}\n")
        return
    if args.batch:
        if args.moves is not None:
            raise CliError("--batch reads the moves from stdin; leave out --moves")
        _run_batch(args.command, variant, default_fen, stdin, stdout)
        return
    if args.command == "play" and args.moves is None:
        raise CliError("play needs --moves M ... (or --batch)")
    game = _new_game(variant, default_fen)
    _play_moves(game, _split_moves(args.moves))
    answer = _answer(args.command, game, batch=False)
    stdout.write(answer + "\n" if answer else "")


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            args = _build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (already printed)
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    try:
        _run(args, stdin, stdout)
    except CliError as exc:
        stderr.write(f"error: {exc}\n")
        return EXIT_BAD_INPUT
    return 0

"""Fairy-Stockfish (pyffish) as a test oracle: thin, call-counting wrappers.

pyffish is a dev dependency of the test suite only; server code never imports it. The engine
and FSF share FEN and move conventions (spec §0.2), so positions and moves pass through as
text. Every query names a root FEN plus the moves played from it: pyffish replays and
validates those moves (an FSF-illegal move raises :class:`OracleError`), so each call also
proves that FSF accepts the whole path.

One pyffish call costs milliseconds, so differential tests budget their calls; ``Oracle.calls``
counts them.

The helpers at the bottom (:func:`winner_from_value`, :func:`walk_tree`) are variant-neutral
so other variants' differential tests can reuse them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pyffish

from server.rules import Position, Side

__all__ = [
    "FSF_NAMES",
    "Oracle",
    "OracleError",
    "TreeReport",
    "position_fields",
    "walk_tree",
    "winner_from_value",
]

# Our variant name -> FSF's built-in variant name (variants FSF knows under the same rules).
FSF_NAMES: dict[str, str] = {"minishogi": "minishogi", "shoshogi": "shoshogi", "spartan": "spartan"}


class OracleError(AssertionError):
    """pyffish refused a query, e.g. because a move of the path is illegal for FSF."""


@dataclass
class Oracle:
    """Queries about positions of one FSF variant, each given as ``(root FEN, moves)``."""

    variant: str
    calls: int = 0

    def _ask(self, fn: Callable[..., object], fen: str, moves: Sequence[str], *extra: object) -> object:
        self.calls += 1
        try:
            return fn(self.variant, fen, list(moves), *extra)
        except (SystemError, ValueError) as exc:  # pyffish wraps its ValueError in SystemError
            cause = exc.__cause__ or exc
            raise OracleError(f"FSF {fn.__name__}({self.variant}, {fen!r}, {len(moves)} moves): {cause}") from None

    def legal_moves(self, fen: str, moves: Sequence[str] = ()) -> set[str]:
        """FSF's legal moves after ``moves``, in the shared coordinate form."""
        result = self._ask(pyffish.legal_moves, fen, moves)
        assert isinstance(result, list)
        return set(result)

    def fen(self, fen: str, moves: Sequence[str] = ()) -> str:
        """The FEN FSF reaches after ``moves``."""
        result = self._ask(pyffish.get_fen, fen, moves)
        assert isinstance(result, str)
        return result

    def in_check(self, fen: str, moves: Sequence[str] = ()) -> bool:
        """Whether the side to move after ``moves`` is in check (so: whether the last move gave check)."""
        return bool(self._ask(pyffish.gives_check, fen, moves))

    def game_result(self, fen: str, moves: Sequence[str] = ()) -> int:
        """FSF's value of a position without legal moves, from the side to move's view.

        Only meaningful when the position is terminal (FSF returns -VALUE_MATE otherwise too).
        """
        result = self._ask(pyffish.game_result, fen, moves)
        assert isinstance(result, int)
        return result

    def optional_end(self, fen: str, moves: Sequence[str] = ()) -> tuple[bool, int]:
        """FSF's ``is_optional_game_end``: for shogi variants the 4-fold repetition verdict."""
        result = self._ask(pyffish.is_optional_game_end, fen, moves)
        assert isinstance(result, tuple)
        ended, value = result
        return bool(ended), int(value)

    def notation(self, fen: str, moves: Sequence[str], style: int) -> list[str]:
        """Human notation of every move of ``moves`` (one call for a whole game)."""
        self.calls += 1
        try:
            result = pyffish.get_san_moves(self.variant, fen, list(moves), False, style)
        except (SystemError, ValueError) as exc:
            raise OracleError(f"FSF get_san_moves({self.variant}, {fen!r}): {exc.__cause__ or exc}") from None
        return list(result)


def winner_from_value(value: int, side_to_move: Side) -> Side | None:
    """Turn an FSF value (side to move's view: > 0 wins, < 0 loses, 0 draw) into a winner."""
    if value == 0:
        return None
    return side_to_move if value > 0 else side_to_move.other


def position_fields(fen: str, count: int = 2) -> tuple[str, ...]:
    """The first ``count`` FEN fields (board with hand, side to move, ...) for comparing
    positions: move counters are left out (FSF and the engine count them differently) and the
    pieces in hand are sorted (FSF lists them in its internal piece order)."""
    fields = fen.split()[:count]
    board = fields[0]
    if board.endswith("]") and "[" in board:
        placement, hand = board[:-1].split("[", 1)
        fields[0] = f"{placement}[{''.join(sorted(hand.replace('-', '')))}]"
    return tuple(fields)


@dataclass
class TreeReport:
    """What :func:`walk_tree` compared: inner nodes, leaves both sides list, and every
    accepted difference as (FEN, path, move, listed by FSF only?)."""

    nodes_compared: int = 0
    shared_leaves: int = 0
    tolerated: list[tuple[str, tuple[str, ...], str, bool]] = field(default_factory=list)


Tolerance = Callable[[Position, tuple[str, ...], str, bool], bool]


def walk_tree(oracle: Oracle, position: Position, depth: int, tolerate: Tolerance) -> TreeReport:
    """Compare the legal-move set of every inner node of a ``depth``-ply perft tree with FSF's.

    The tree is the one both sides share: the engine's legal moves that FSF lists as well.
    A move only one side lists must be accepted by ``tolerate(position, path, move,
    fsf_only)``, which should verify that it is a known, documented difference; anything
    else raises AssertionError naming the node. Tolerated moves are not followed (FSF
    rejects paths through the engine-only ones). ``shared_leaves`` is then the perft count
    both sides agree on; FSF's own count adds the FSF-only moves of the last level.
    """
    report = TreeReport()
    root = position.fen()

    def visit(pos: Position, path: tuple[str, ...], remaining: int) -> None:
        ours = {pos.uci(m): m for m in pos.legal_moves()}
        theirs = oracle.legal_moves(root, path)
        report.nodes_compared += 1
        for move in sorted(ours.keys() ^ theirs):
            fsf_only = move in theirs
            who = "FSF" if fsf_only else "engine"
            assert tolerate(pos, path, move, fsf_only), (
                f"{who}-only move {move} at {pos.fen()!r} (root {root!r}, path {list(path)})"
            )
            report.tolerated.append((pos.fen(), path, move, fsf_only))
        shared = [m for text, m in ours.items() if text in theirs]
        if remaining == 1:
            report.shared_leaves += len(shared)
            return
        for m in shared:
            visit(pos.play(m), (*path, pos.uci(m)), remaining - 1)

    if depth > 0:
        visit(position, (), depth)
    return report

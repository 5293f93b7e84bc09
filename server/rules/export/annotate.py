"""A computer analysis in the exports: per-move evaluation and judgement comments.

* **PGN** (lichess's format, which python-chess reads back with ``node.eval()``): after each
  move its evaluation and clock share one comment, ``{ [%eval 0.35] [%clk 0:02:58] }`` (pawns
  with two decimals, or ``#3`` / ``#-3`` for a mate, from the first player's view); a judged
  move carries its glyph (``?!`` inaccuracy, ``?`` mistake, ``??`` blunder) and the comment
  continues ``Blunder. Nf3 was best.``
* **KIF**: comment lines (``*``) after the move line, in the form shogi GUIs (ShogiGUI, Kifu
  for Windows) use for engine analysis: ``**解析 0 ○ 深さ 12 評価値 35 読み筋 ▲７六歩(77)
  △３四歩(33)`` (``評価値`` in centipawns from sente's view, ``詰3`` / ``-詰3`` for a mate
  of sente / gote), then for a judged move ``*疑問手`` (inaccuracy), ``*悪手`` (mistake) or
  ``*大悪手`` (blunder) with ``最善手 ７六歩(77)``.
* **USI** is one ``position`` line: it has no room for comments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..analysis import JUDGEMENT_GLYPHS, FirstPlayerScore, MoveAdvice, PlyEval, advices
from ..game import Game
from ..position import Move, Position

__all__ = [
    "KIF_JUDGEMENTS",
    "AnnotatedMoves",
    "KifMover",
    "MoveShower",
    "annotate",
    "kif_comment_lines",
    "kif_score_text",
    "legal_move",
]

KIF_JUDGEMENTS = {"inaccuracy": "疑問手", "mistake": "悪手", "blunder": "大悪手"}
_PGN_JUDGEMENTS = {"inaccuracy": "Inaccuracy", "mistake": "Mistake", "blunder": "Blunder"}
#: Longest line shown in a KIF comment.
KIF_PV_MOVES = 10


@dataclass(frozen=True, slots=True)
class AnnotatedMoves:
    """An analysis looked up by move: ``evals[ply]`` the position after move ``ply``,
    ``advice[ply]`` the judgement of move ``ply``."""

    evals: dict[int, PlyEval]
    advice: dict[int, MoveAdvice]

    def glyph(self, ply: int) -> str:
        found = self.advice.get(ply)
        return JUDGEMENT_GLYPHS[found.judgement] if found else ""

    def pgn_eval(self, ply: int) -> str | None:
        """``[%eval …]`` of the position after move ``ply``, if analysed."""
        entry = self.evals.get(ply)
        return None if entry is None else f"[%eval {entry.score.pgn_text()}]"

    def pgn_remark(self, ply: int, game: Game, show: MoveShower) -> str | None:
        """``Blunder. Nf3 was best.`` for a judged move ``ply``."""
        found = self.advice.get(ply)
        if found is None:
            return None
        text = f"{_PGN_JUDGEMENTS[found.judgement]}."
        if found.best is not None:
            pos = game.position_at(ply - 1)
            move = legal_move(pos, found.best)
            text += f" {show(pos, move) if move is not None else found.best} was best."
        return text


MoveShower = Callable[[Position, Move], str]
"""A legal move of a position as the export writes it (SAN, a shogi display)."""
KifMover = Callable[[Position, Move, "int | None"], str]
"""kif_move_text: a legal move as a KIF move (``previous_to`` for 同)."""


def annotate(evals: Iterable[PlyEval], game: Game) -> AnnotatedMoves:
    """Index an analysis of ``game`` by move (its own best moves are not judged)."""
    table = {e.ply: e for e in evals}
    found = advices(table.values(), game.start_turn, game.moves)
    return AnnotatedMoves(table, {a.ply: a for a in found})


def legal_move(pos: Position, text: str) -> Move | None:
    """``text`` as a legal move of ``pos`` (None if it is not one)."""
    return pos.legal_by_text().get(text)


def kif_score_text(score: FirstPlayerScore) -> str:
    if score.mate is not None:
        return f"詰{score.mate}" if score.mate > 0 else f"-詰{-score.mate}"
    return str(score.cp)


def kif_comment_lines(
    annotated: AnnotatedMoves,
    ply: int,
    game: Game,
    move_text: KifMover,
) -> list[str]:
    """The ``*`` lines after move ``ply`` of a KIF record."""
    lines: list[str] = []
    entry = annotated.evals.get(ply)
    if entry is not None:
        line = f"**解析 0 ○ 深さ {entry.depth} 評価値 {kif_score_text(entry.score)}"
        pv = _kif_line(game.position_at(ply), entry.pv[:KIF_PV_MOVES], move_text)
        if pv:
            line += " 読み筋 " + " ".join(pv)
        lines.append(line)
    found = annotated.advice.get(ply)
    if found is not None:
        line = f"*{KIF_JUDGEMENTS[found.judgement]}"
        if found.best is not None:
            best = _kif_line(game.position_at(ply - 1), (found.best,), move_text)
            if best:
                line += " 最善手 " + best[0][1:]  # without the side mark
        lines.append(line)
    return lines


def _kif_line(pos: Position, moves: Sequence[str], move_text: KifMover) -> list[str]:
    """A line of our move texts as KIF moves with side marks (▲ sente, △ gote), cut at its
    first move that is not legal."""
    shown: list[str] = []
    previous_to: int | None = None
    for text in moves:
        move = legal_move(pos, text)
        if move is None:
            break
        mark = "▲" if pos.turn == 0 else "△"
        shown.append(mark + move_text(pos, move, previous_to))
        previous_to = move.to_sq
        pos = pos.play(move)
    return shown

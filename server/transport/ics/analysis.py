"""ICS text of computer analyses: ``analyze`` requests one, ``analysis`` shows it (docs/ics.md).

Both go through :mod:`server.transport.analysis_api`, the checks and view every door shares, on
the store the ICS door is given (the app hands it its analysis desk, which queues the engine
job; the door imports nothing of the app). A refusal is one line in words, nothing stored.
"""

from __future__ import annotations

from server.hub.errors import ErrorCode
from server.rules.analysis import (
    JUDGEMENT_GLYPHS,
    AnalysisLimitsView,
    Judgement,
    ScoreView,
    SideSummaryView,
)
from server.rules.record import GameRecord
from server.transport.analysis_api import (
    AnalysisBackend,
    AnalysisRequestError,
    Requester,
    analysis_view,
    request_analysis,
)
from server.transport.ics.args import NO_SUCH_GAME

__all__ = ["analysis_lines", "request_lines"]


def _refusal(error: AnalysisRequestError, number: int, game_id: str) -> str:
    if error.code == ErrorCode.NOT_FOUND:
        return NO_SUCH_GAME
    if error.code == ErrorCode.GAME_NOT_FINISHED:
        return f"Game {number} is not over yet: only finished games can be analysed."
    if error.code == ErrorCode.ANALYSIS_EXISTS:
        return f'Game {number} already has an analysis: type "analysis #{game_id}".'
    if error.code == ErrorCode.NO_ANALYSIS:
        return f'Game {number} has no analysis yet: type "analyze #{game_id}" to request one.'
    if error.code == ErrorCode.UNAVAILABLE:
        return "Analyses are not available just now; try again later."
    return error.message


def _limits(limits: AnalysisLimitsView) -> str:
    parts = []
    if limits.get("movetime_ms"):
        parts.append(f"{limits['movetime_ms']} ms")
    if limits.get("depth"):
        parts.append(f"depth {limits['depth']}")
    return " or ".join(parts) + " a position"


async def request_lines(
    store: AnalysisBackend, game_id: str, number: int, requester: Requester
) -> list[str]:
    """``analyze``: request the analysis of a finished game with the variant's defaults (a
    registered player's; the refusals are the shared checks', in words)."""
    try:
        view = await request_analysis(store, game_id, {}, requester)
    except AnalysisRequestError as error:
        return [_refusal(error, number, game_id)]
    total = view["progress"]["total"]
    return [
        f"Analysis of game {number} requested: {total} position{'' if total == 1 else 's'} "
        f"at {_limits(view['limits'])}, about {view['estimate_s']} s.",
        f'Type "analysis #{game_id}" to see how far it is.',
    ]


def _score(score: ScoreView) -> str:
    if "mate" in score:
        return f"#{score['mate']}"
    return f"{score.get('cp', 0) / 100:+.2f}"


_COUNTED: tuple[tuple[Judgement, str], ...] = (
    ("inaccuracy", "inaccuracies"),
    ("mistake", "mistakes"),
    ("blunder", "blunders"),
)


def _side(name: str, summary: SideSummaryView) -> str:
    if summary["moves"] == 0:
        return f"{name}: no move analysed yet."
    counts = ", ".join(
        f"{summary[kind]} {kind if summary[kind] == 1 else many}" for kind, many in _COUNTED
    )
    return f"{name}: {counts}; average loss {summary['acpl']}, accuracy {summary['accuracy']}%."


def _move_text(record: GameRecord, ply: int, chess: bool) -> str:
    move = record.moves[ply - 1]
    text = move.display if chess and move.display else move.uci
    number = (ply + 1) // 2
    return f"{number:>3}. {text}" if ply % 2 else f"{number:>3}... {text}"


async def analysis_lines(
    store: AnalysisBackend, game_id: str, number: int, chess: bool
) -> list[str]:
    """``analysis``: the state, the per-side summary and one line per evaluated position
    (evaluation from the first player's view; the engine's best move in the position before a
    move, and the move's mark)."""
    try:
        view = await analysis_view(store, game_id)
        record = await store.get_game(game_id)
    except AnalysisRequestError as error:
        return [_refusal(error, number, game_id)]
    if record is None:
        return [NO_SUCH_GAME]
    state, progress = view["state"], view["progress"]
    head = (
        f"Analysis of game {number} ({record.first_name} vs. {record.second_name}): {state}, "
        f"{progress['done']} of {progress['total']} positions at {_limits(view['limits'])}"
    )
    if state in ("queued", "running"):
        head += f", about {view['estimate_s']} s to go"
    lines = [head + "."]
    if view.get("error"):
        lines.append(f"It failed: {view['error']}")
    lines += [
        _side(record.first_name, view["summary"]["first"]),
        _side(record.second_name, view["summary"]["second"]),
    ]
    evals = {entry["ply"]: entry for entry in view["plies"]}
    marks = {advice["ply"]: advice for advice in view["advice"]}
    if evals:
        lines.append("Move              Eval     Engine's best before the move")
    for ply in range(len(record.moves) + 1):
        entry = evals.get(ply)
        if entry is None and not (state == "done" and ply == len(record.moves) and ply):
            continue  # not analysed yet (a final position that ended the game never is)
        score = "end" if entry is None else _score(entry["score"])
        if ply == 0:
            lines.append(f"{'start':<17} {score:>7}")
            continue
        before = evals.get(ply - 1)
        # Written as the move column writes moves: SAN in chess, coordinates in shogi.
        best = None if before is None else before["best"]
        if chess and before is not None and before["best_display"]:
            best = before["best_display"]
        best = best or "-"
        line = f"{_move_text(record, ply, chess):<17} {score:>7}   {best}"
        advice = marks.get(ply)
        if advice is not None:
            line += f"  {JUDGEMENT_GLYPHS[advice['judgement']]} {advice['judgement']}"
        lines.append(line)
    return lines

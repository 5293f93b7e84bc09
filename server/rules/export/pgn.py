"""PGN: the export format of every variant (tags, movetext with clock comments)."""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis import PlyEval
from ..game import Game, Termination
from ..notation import display_move
from ..position import Move, Position
from ..record import GameRecord
from ..squares import shogi_square
from ..time_control import Correspondence
from ..variant import Variant
from .annotate import annotate
from .replay import (
    clock_text,
    format_time_control,
    is_standard_start,
    moves_of,
    record_variant,
    replay_record,
)

__all__ = ["pgn_move_text", "pgn_tags", "write_pgn"]

_PGN_TERMINATION: dict[str, str] = {
    Termination.TIME: "time forfeit",
    Termination.ABANDONMENT: "abandoned",
    Termination.ABORT: "abandoned",
    Termination.PERPETUAL_CHECK: "rules infraction",
}

_ENDING_WORDS: dict[str, str] = {
    Termination.CHECKMATE: "checkmate",
    Termination.STALEMATE: "stalemate",
    Termination.ROYAL_CAPTURE: "capture of the royal piece",
    Termination.REPETITION: "repetition",
    Termination.PERPETUAL_CHECK: "perpetual check",
    Termination.FIFTY_MOVES: "the fifty-move rule",
    Termination.SEVENTY_FIVE_MOVES: "the seventy-five-move rule",
    Termination.DEAD_POSITION: "dead position",
    Termination.RESIGNATION: "resignation",
    Termination.TIME: "time",
    Termination.AGREEMENT: "agreement",
    Termination.ABANDONMENT: "abandonment",
}


def _side_names(variant: Variant) -> tuple[str, str]:
    return ("Sente", "Gote") if variant.family == "shogi" else ("White", "Black")


def _ending_sentence(record: GameRecord) -> str | None:
    """``"Black wins by resignation."``, ``"Draw by repetition."``, ``"Game aborted."``."""
    if record.termination is None:
        return None
    if record.termination == Termination.ABORT:
        return "Game aborted."
    how = _ENDING_WORDS.get(record.termination, record.termination.replace("_", " "))
    if record.result == "1/2-1/2":
        return f"Draw by {how}."
    winner = record.winner
    if winner is None:
        return f"Game ended by {how}."
    return f"{_side_names(record_variant(record))[winner]} wins by {how}."


def _tag_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def pgn_tags(record: GameRecord, game: Game | None = None, site: str = "?") -> dict[str, str]:
    """The PGN tag pairs of ``record``, in export order (the seven-tag roster first).

    ``site`` is the ``Site`` tag: where the game was played (a URL), ``?`` when unknown.
    """
    game = replay_record(record, game)
    v = game.variant
    when = record.started_at or record.created_at
    date = when.strftime("%Y.%m.%d")
    tags = {
        "Event": f"{'Rated' if record.rated else 'Casual'} {v.title} game",
        "Site": site,
        "Date": date,
        "Round": "-" if record.tournament_round is None else str(record.tournament_round),
        "White": record.first_name,
        "Black": record.second_name,
        "Result": record.result or "*",
    }
    tags["GameId"] = record.id
    if record.tournament_id is not None:
        # lichess writes a tournament game's event as the tournament's URL; its id here.
        tags["Event"] = f"{'Rated' if record.rated else 'Casual'} {v.title} tournament game"
        tags["TournamentId"] = record.tournament_id
    tags["UTCDate"] = date
    tags["UTCTime"] = when.strftime("%H:%M:%S")
    if record.first_rating_before is not None:
        tags["WhiteElo"] = str(record.first_rating_before)
    if record.second_rating_before is not None:
        tags["BlackElo"] = str(record.second_rating_before)
    tags["Variant"] = v.name
    tags["TimeControl"] = format_time_control(record.time_control)
    if isinstance(record.time_control, Correspondence):
        # Not a standard tag: "-" above says no clock, this keeps what the game had.
        tags["DaysPerMove"] = str(record.time_control.days_per_move)
    if record.termination is None:
        tags["Termination"] = "unterminated"
    else:
        tags["Termination"] = _PGN_TERMINATION.get(record.termination, "normal")
    if v.start_fen_generator is not None or not is_standard_start(game):
        tags["SetUp"] = "1"
        tags["FEN"] = game.position_at(0).fen()
    tags["PlyCount"] = str(game.ply)
    return tags


def pgn_move_text(pos: Position, move: Move, display: str) -> str:
    """``display`` (the move in ``pos`` as the adjudicator shows it) as a PGN movetext token.

    Chess-family SAN passes unchanged. Shogi-family notations use characters PGN reserves:
    a drop's ``*`` (PGN's "unfinished game" marker) becomes ``@`` (``P*3c`` → ``P@3c``, as in
    Fairy-Stockfish SAN), and a Dai Shogi igui ``Lnx!9d`` (``!`` is a PGN annotation) is
    written as the capture and the step back to the origin it is: ``Lnx9d-8c``.
    """
    text = display.replace("*", "@")
    if "x!" in text:
        victim = shogi_square(pos, move.via[0])
        text = text.replace(f"x!{victim}", f"x{victim}-{shogi_square(pos, move.from_sq)}")
    return text


def write_pgn(
    record: GameRecord,
    game: Game | None = None,
    width: int = 80,
    site: str = "?",
    analysis: Sequence[PlyEval] = (),
) -> str:
    """``record`` as one PGN game (tags, blank line, movetext, blank line).

    ``game`` may be passed when the caller already has the replay of the record
    (:func:`~server.rules.export.replay.replay`); ``site`` as in :func:`pgn_tags`. With an
    ``analysis``, each move's comment starts with its ``[%eval …]`` and judged moves carry
    their glyph and remark (:mod:`~server.rules.export.annotate`).
    """
    game = replay_record(record, game)
    notes = annotate(analysis, game)
    tags = pgn_tags(record, game, site)
    if analysis:
        tags["Annotator"] = "Variant Hub computer analysis"
    lines = [f'[{name} "{_tag_value(value)}"]' for name, value in tags.items()]
    tokens: list[str] = []
    start = game.position_at(0)
    number = start.fullmove
    for i, (move, display) in enumerate(zip(moves_of(game), game.displays)):
        pos = game.position_at(i)
        text = pgn_move_text(pos, move, display)
        # Every move is followed by its clock comment, so the second player's moves need
        # their number ("1... e5") too.
        dots = "." if pos.turn == 0 else "..."
        # A move number stays on the line of its move.
        tokens.append(f"{number}{dots} {text}{notes.glyph(i + 1)}")
        parts = [notes.pgn_eval(i + 1), f"[%clk {clock_text(record.moves[i].clock_ms)}]"]
        parts.append(notes.pgn_remark(i + 1, game, _shown_move))
        tokens.append("{ " + " ".join(p for p in parts if p) + " }")
        if pos.turn == 1:
            number += 1
    ending = _ending_sentence(record)
    if ending:
        tokens.append(f"{{ {ending} }}")
    tokens.append(tags["Result"])
    return "\n".join(lines) + "\n\n" + "\n".join(_wrap(tokens, width)) + "\n\n"


def _shown_move(pos: Position, move: Move) -> str:
    return pgn_move_text(pos, move, display_move(pos, move))


def _wrap(tokens: Sequence[str], width: int) -> list[str]:
    """Join tokens with spaces into lines of at most ``width`` characters (a longer token
    gets a line of its own); comments are single tokens, so they are never split."""
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > width:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    if line:
        lines.append(line)
    return lines

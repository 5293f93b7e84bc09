"""KIF (Kakinoki), the Japanese game-record format of the shogi family, in UTF-8."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import datetime

from ..analysis import PlyEval
from ..game import Game, Side, Termination
from ..position import NULL_SQUARE, Move, Position
from ..record import GameRecord
from ..time_control import Byoyomi, Correspondence, TimeControl, Unlimited
from ..variant import PieceType, Variant
from .annotate import annotate, kif_comment_lines
from .replay import is_standard_start, moves_of, record_variant, replay_record, seconds_text

__all__ = ["kif_board", "kif_move_text", "kif_piece_name", "write_kif"]

#: Move-line names of the 5×5 / 9×9 shogi pieces (by ``PieceType.name``); Sho Shogi's
#: Drunk Elephant and Crown Prince are written with their two-kanji names.
SHOGI_KANJI = {
    "King": "玉",
    "Rook": "飛",
    "Bishop": "角",
    "Gold": "金",
    "Silver": "銀",
    "Knight": "桂",
    "Lance": "香",
    "Pawn": "歩",
    "Dragon": "龍",
    "Horse": "馬",
    "Promoted silver": "成銀",
    "Promoted knight": "成桂",
    "Promoted lance": "成香",
    "Tokin": "と",
    "Drunk Elephant": "酔象",
    "Crown Prince": "太子",
}

#: One-character names for board diagrams (BOD) of boards up to 9×9: the move-line names,
#: with one character for the pieces whose move-line name has two.
SHOGI_BOARD_KANJI = {
    **SHOGI_KANJI,
    "Promoted silver": "全",
    "Promoted knight": "圭",
    "Promoted lance": "杏",
    "Tokin": "と",
    "Drunk Elephant": "酔",
    "Crown Prince": "太",
}

#: Dai Shogi pieces by their full two-kanji names.
DAI_KANJI = {
    "King": "玉将",
    "Drunk Elephant": "酔象",
    "Free King": "奔王",
    "Lion": "獅子",
    "Dragon King": "龍王",
    "Dragon Horse": "龍馬",
    "Rook": "飛車",
    "Bishop": "角行",
    "Vertical Mover": "竪行",
    "Side Mover": "横行",
    "Reverse Chariot": "反車",
    "Lance": "香車",
    "Blind Tiger": "盲虎",
    "Ferocious Leopard": "猛豹",
    "Gold General": "金将",
    "Silver General": "銀将",
    "Copper General": "銅将",
    "Iron General": "鉄将",
    "Stone General": "石将",
    "Knight": "桂馬",
    "Kirin": "麒麟",
    "Phoenix": "鳳凰",
    "Violent Ox": "猛牛",
    "Flying Dragon": "飛龍",
    "Evil Wolf": "悪狼",
    "Angry Boar": "嗔猪",
    "Cat Sword": "猫刄",
    "Go-Between": "仲人",
    "Pawn": "歩兵",
}

#: Dai Shogi promoted pieces that have a name of their own; every other promoted piece is
#: written 成 + the name of the piece it promoted from (成麒麟 moves as a Lion).
DAI_PROMOTED_KANJI = {
    "Crown Prince": "太子",
    "Soaring Eagle": "飛鷲",
    "Horned Falcon": "角鷹",
    "Flying Ox": "飛牛",
    "Free Boar": "奔猪",
    "Whale": "鯨鯢",
    "White Horse": "白駒",
    "Flying Stag": "飛鹿",
}

KIF_HANDICAP = {"minishogi": "5五将棋", "shoshogi": "小将棋", "daishogi": "大将棋"}

_FULL_WIDTH_DIGITS = str.maketrans("0123456789", "０１２３４５６７８９")
_KANJI_DIGITS = "〇一二三四五六七八九"
_MOVE_COLUMN = 13  # display columns of the move field before the time


def _kanji_number(n: int) -> str:
    """1..99 in kanji numerals: 五, 十, 十五, 二十三."""
    tens, units = divmod(n, 10)
    text = ("" if tens <= 1 else _KANJI_DIGITS[tens]) + ("十" if tens else "")
    return text + (_KANJI_DIGITS[units] if units else "")


def _kif_square(variant: Variant, square: int) -> str:
    g = variant.geometry
    file = g.files - g.file_of(square)
    rank = g.ranks - g.rank_of(square)
    return str(file).translate(_FULL_WIDTH_DIGITS) + _kanji_number(rank)


def _kif_origin(variant: Variant, square: int) -> str:
    g = variant.geometry
    file = g.files - g.file_of(square)
    rank = g.ranks - g.rank_of(square)
    return f"({file}{rank})" if g.files <= 9 and g.ranks <= 9 else f"({file},{rank})"


def kif_piece_name(variant: Variant, code: int) -> str:
    """The move-line name of piece ``code``: kanji where known, else its display letters."""
    piece: PieceType = variant.t.types[code]
    if variant.notation != "dai":
        return SHOGI_KANJI.get(piece.name, piece.display)
    if piece.is_promoted:
        if piece.name in DAI_PROMOTED_KANJI:
            return DAI_PROMOTED_KANJI[piece.name]
        base = variant.piece(piece.base_symbol)
        return "成" + DAI_KANJI.get(base.name, base.display)
    return DAI_KANJI.get(piece.name, piece.display)


def kif_move_text(pos: Position, move: Move, previous_to: int | None = None) -> str:
    """``move`` (legal in ``pos``) as a KIF move: ``７六歩(77)``, ``同　歩(76)``, ``５五角打``,
    ``２二角成(88)``, ``３三銀不成(44)``. Multi-leg (Lion) moves list the squares passed
    through after ``経``; a Lion pass is ``パス``."""
    v = pos.variant
    t = v.t
    if move.from_sq == NULL_SQUARE:
        return f"{_kif_square(v, move.to_sq)}{kif_piece_name(v, move.drop)}打"
    code = abs(pos.board[move.from_sq])
    if move.via and move.from_sq == move.to_sq and not pos.is_capture(move):
        return "パス"
    name = kif_piece_name(v, code)
    if move.to_sq == previous_to:
        target = "同" + ("　" if len(name) == 1 else "")
    else:
        target = _kif_square(v, move.to_sq)
    suffix = ""
    if move.promotion:
        suffix = "成"
    elif (
        t.promote[code]
        and Move(move.from_sq, move.to_sq, t.promote[code], 0, move.via) in pos.legal_moves()
    ):
        suffix = "不成"
    text = f"{target}{name}{suffix}{_kif_origin(v, move.from_sq)}"
    if move.via:
        text += "経" + "".join(_kif_square(v, s) for s in move.via)
    return text


def _display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "FW" else 1 for c in text)


def _kif_time(spent_ms: int, total_ms: int) -> str:
    minutes, seconds = divmod(spent_ms // 1000, 60)
    hours, rest = divmod(total_ms // 1000, 3600)
    return f"({minutes:>2}:{seconds:02d}/{hours:02d}:{rest // 60:02d}:{rest % 60:02d})"


def _kif_line(number: int, text: str, time: str | None) -> str:
    if time is None:
        return f"{number:>4} {text}"
    pad = max(1, _MOVE_COLUMN - _display_width(text))
    return f"{number:>4} {text}{' ' * pad}{time}"


#: Endings written as a last "move" of the side to move, which lost.
_KIF_LOSSES: dict[str, str] = {
    Termination.RESIGNATION: "投了",
    Termination.ABANDONMENT: "投了",
    Termination.TIME: "切れ負け",
    Termination.CHECKMATE: "詰み",
    Termination.STALEMATE: "詰み",
}


def _kif_ending(record: GameRecord, game: Game) -> tuple[str | None, str | None]:
    """The closing special move (投了, 詰み, ...) and the ``まで…`` summary.

    A KIF special move is made by the side to move: 投了 / 切れ負け / 詰み are written only
    when that side is the loser (a player may resign, or lose on time by abandonment, while
    the opponent is to move; then the summary line alone tells who won).
    """
    term = record.termination
    if term is None:
        return None, None
    n = game.ply
    winner = record.winner
    mover = Side(game.position.turn)
    special: str | None = None
    if term in _KIF_LOSSES and winner is not None and winner != mover:
        special = _KIF_LOSSES[term]
    elif term == Termination.PERPETUAL_CHECK and winner is not None:
        special = "反則負け" if winner != mover else "反則勝ち"
    elif term == Termination.REPETITION:
        special = "千日手"
    elif term == Termination.ABORT:
        special = "中断"
    if term == Termination.ABORT:
        return special, f"まで{n}手で中断"
    if winner is not None:
        return special, f"まで{n}手で{'先手' if winner is Side.FIRST else '後手'}の勝ち"
    if term == Termination.REPETITION:
        return special, f"まで{n}手で千日手"
    return special, f"まで{n}手で引き分け"


def _kif_time_control(control: TimeControl) -> str:
    if isinstance(control, Correspondence):
        return f"1手{control.days_per_move}日"  # "N days a move"
    if isinstance(control, Unlimited):
        return "無制限"  # "unlimited"
    base = _minutes_text(control.base_ms)
    if isinstance(control, Byoyomi):
        return f"{base}+秒読み{seconds_text(control.period_ms)}秒×{control.periods}"
    return f"{base}+{seconds_text(control.increment_ms)}秒"


def _minutes_text(ms: int) -> str:
    minutes, rest = divmod(ms, 60_000)
    if not rest:
        return f"{minutes}分"
    return f"{minutes}分{seconds_text(rest)}秒" if minutes else f"{seconds_text(rest)}秒"


def _kif_hand(pos: Position, side: int) -> str:
    parts = []
    t = pos.variant.t
    for code, count in enumerate(pos.hands[side]):
        if count:
            name = SHOGI_BOARD_KANJI.get(t.types[code].name, t.types[code].display)
            parts.append(name + (_kanji_number(count) if count > 1 else ""))
    return "　".join(parts) if parts else "なし"


def kif_board(pos: Position) -> list[str]:
    """A KIF board diagram (BOD) of ``pos`` for boards up to 9×9: hands, files, ranks."""
    v = pos.variant
    g = v.geometry
    files = "".join(" " + str(n).translate(_FULL_WIDTH_DIGITS) for n in range(g.files, 0, -1))
    border = "+" + "-" * (3 * g.files) + "+"
    lines = [f"後手の持駒：{_kif_hand(pos, 1)}", " " + files, border]
    for rank in range(g.ranks - 1, -1, -1):
        row = ""
        for file in range(g.files):
            piece = pos.board[g.square(file, rank)]
            if not piece:
                row += " ・"
                continue
            kind = v.t.types[abs(piece)]
            row += (" " if piece > 0 else "v") + SHOGI_BOARD_KANJI.get(kind.name, kind.display[:1])
        lines.append(f"|{row}|{_kanji_number(g.ranks - rank)}")
    lines += [border, f"先手の持駒：{_kif_hand(pos, 0)}"]
    if pos.turn == 1:
        lines.append("後手番")
    return lines


def _kif_datetime(moment: datetime) -> str:
    return moment.strftime("%Y/%m/%d %H:%M:%S")


def write_kif(
    record: GameRecord, game: Game | None = None, analysis: Sequence[PlyEval] = ()
) -> str:
    """``record`` as a KIF file (UTF-8 text, first line ``#KIF version=2.0 encoding=UTF-8``).

    Shogi family only (raise ValueError otherwise). Times are UTC. A board diagram follows
    the header when the start is not the variant's standard one (boards up to 9×9; a larger
    board's start is given as a ``#開始局面`` comment with its FEN). With an ``analysis``,
    ``*`` comment lines follow each move (:mod:`~server.rules.export.annotate`).
    """
    v = record_variant(record)
    if v.family != "shogi":
        raise ValueError(f"KIF is for shogi variants; {v.title} is a {v.family} variant")
    game = replay_record(record, game)
    notes = annotate(analysis, game)
    lines = ["#KIF version=2.0 encoding=UTF-8", f"#対局ID：{record.id}"]
    lines.append(f"開始日時：{_kif_datetime(record.started_at or record.created_at)}")
    if record.finished_at:
        lines.append(f"終了日時：{_kif_datetime(record.finished_at)}")
    lines.append(f"棋戦：{'Rated' if record.rated else 'Casual'} {v.title}")
    lines.append(f"持ち時間：{_kif_time_control(record.time_control)}")
    lines.append(f"手合割：{KIF_HANDICAP.get(v.name, v.title)}")
    lines.append(f"先手：{record.first_name}")
    lines.append(f"後手：{record.second_name}")
    start = game.position_at(0)
    if not is_standard_start(game):
        if v.geometry.files <= 9 and v.geometry.ranks <= 9:
            lines += kif_board(start)
        else:
            lines.append(f"#開始局面：{start.fen()}")
    lines.append("手数----指手---------消費時間--")
    totals = [0, 0]
    previous_to: int | None = None
    for i, move in enumerate(moves_of(game)):
        pos = game.position_at(i)
        text = kif_move_text(pos, move, previous_to)
        previous_to = move.to_sq
        spent = record.moves[i].spent_ms
        totals[pos.turn] += spent
        lines.append(_kif_line(i + 1, text, _kif_time(spent, totals[pos.turn])))
        lines += kif_comment_lines(notes, i + 1, game, kif_move_text)
    special, summary = _kif_ending(record, game)
    if special:
        lines.append(_kif_line(game.ply + 1, special, None))
    if summary:
        lines.append(summary)
    return "\n".join(lines) + "\n"

"""Game records as text: PGN (every variant), KIF and USI (shogi family). Pure: no I/O.

A :class:`GameRecord` holds what a stored game knows (variant, start position, coordinate
moves with their clocks, players, result); :func:`replay` plays its moves through the
adjudicator, and the writers turn record and replay into text:

* :func:`write_pgn` — PGN export format: the seven-tag roster, ``Variant``, ``TimeControl``,
  ``Termination``, ``SetUp``/``FEN`` when the start is not the variant's standard one (always
  for a variant that draws its setups), move numbers, one ``{ [%clk h:mm:ss] }`` per move.
  Chess-family moves are SAN; shogi-family moves are the display notation made PGN-safe
  (see :func:`pgn_move_text`).
* :func:`write_kif` — Japanese KIF (Kakinoki) in UTF-8: header lines, an optional board
  diagram (BOD), ``手数----指手---------消費時間--`` and one line per move with its thinking
  time, then the ending (投了, 詰み, 千日手, ...) and a ``まで…`` summary.
* :func:`write_usi` — ``position sfen <sfen> moves <m1> <m2> ...`` with USI moves (file digit
  counted from the right, rank letter from the top: ``7g7f``, ``P*5e``, ``2b3c+``).

>>> from server.rules import get_variant
>>> move = MoveRecord(1, "e1e4", "Rx1b", clock_ms=60_000, spent_ms=2_000)
>>> record = GameRecord(variant=get_variant("minishogi"), moves=(move,))
>>> write_usi(record)
'position sfen rbsgk/4p/5/P4/KGSBR b - 1 moves 1e1b\\n'
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from .errors import RulesError
from .game import Game, Side
from .notation import shogi_square
from .position import NULL_SQUARE, Move, Position
from .record import MoveRecord
from .variant import Variant

__all__ = [
    "GameRecord",
    "TimeSetting",
    "clock_text",
    "format_time_control",
    "kif_move_text",
    "pgn_move_text",
    "pgn_tags",
    "replay",
    "usi_move",
    "write_kif",
    "write_pgn",
    "write_usi",
]

RESULTS = ("1-0", "0-1", "1/2-1/2")


@dataclass(frozen=True, slots=True)
class TimeSetting:
    """A game's clock: ``"fischer"`` (base + increment) or ``"byoyomi"`` (base, then periods)."""

    kind: str
    base_ms: int
    increment_ms: int = 0
    byoyomi_ms: int = 0
    periods: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class GameRecord:
    """Everything the writers need to know about one game.

    ``result`` is ``"1-0"`` (first player won), ``"0-1"``, ``"1/2-1/2"`` or None (unfinished or
    aborted); ``termination`` is an adjudicator termination (``"checkmate"``, ...) or a server
    one (``"resignation"``, ``"time"``, ``"agreement"``, ``"abort"``, ``"abandonment"``).
    Datetimes should be aware; they are written in UTC.
    """

    variant: Variant
    moves: tuple[MoveRecord, ...] = ()
    start_fen: str | None = None
    game_id: str | None = None
    site: str = "?"
    first_name: str = "?"
    second_name: str = "?"
    first_rating: int | None = None
    second_rating: int | None = None
    rated: bool = False
    result: str | None = None
    termination: str | None = None
    time_control: TimeSetting | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.result is not None and self.result not in RESULTS:
            raise ValueError(
                f"result must be one of {', '.join(RESULTS)} or None, got {self.result!r}"
            )

    @property
    def winner(self) -> Side | None:
        if self.result == "1-0":
            return Side.FIRST
        if self.result == "0-1":
            return Side.SECOND
        return None


def replay(variant: Variant, start_fen: str | None, moves: Iterable[str]) -> Game:
    """Play ``moves`` (coordinate form) from ``start_fen`` and return the game.

    Raise :class:`~server.rules.errors.InvalidFenError` for a bad start, and the move's
    :class:`~server.rules.errors.InvalidMoveError` / :class:`IllegalMoveError` with the ply
    number prefixed when a move does not replay.
    """
    game = Game(variant, start_fen)
    for ply, uci in enumerate(moves, 1):
        try:
            game.play(uci)
        except RulesError as exc:
            raise type(exc)(f"move {ply} ({uci}): {exc}") from exc
    return game


def _replay_record(record: GameRecord, game: Game | None) -> Game:
    if game is not None:
        if game.variant is not record.variant or game.ply != len(record.moves):
            raise ValueError("the game passed in is not the replay of this record")
        return game
    return replay(record.variant, record.start_fen, (m.uci for m in record.moves))


def _moves_of(game: Game) -> list[Move]:
    """The :class:`Move` objects of ``game`` (re-read from each position's cached legal moves)."""
    return [game.position_at(i).move_from_uci(uci) for i, uci in enumerate(game.moves)]


def _is_standard_start(game: Game) -> bool:
    v = game.variant
    return game.position_at(0).fen() == Position.from_fen(v, v.start_fen).fen()


# --------------------------------------------------------------------------- clocks


def format_time_control(setting: TimeSetting | None) -> str:
    """The PGN ``TimeControl`` value: ``"300+3"`` (Fischer: base and increment in seconds),
    ``"600+30x3"`` (byoyomi: main time, then 3 periods of 30 s), ``"-"`` when unknown.

    >>> format_time_control(TimeSetting("byoyomi", 600_000, byoyomi_ms=30_000, periods=3))
    '600+30x3'
    """
    if setting is None:
        return "-"
    base = _seconds(setting.base_ms)
    if setting.kind == "byoyomi":
        return f"{base}+{_seconds(setting.byoyomi_ms)}x{setting.periods}"
    return f"{base}+{_seconds(setting.increment_ms)}"


def _seconds(ms: int) -> str:
    whole, rest = divmod(ms, 1000)
    return str(whole) if not rest else f"{ms / 1000:g}"


def clock_text(ms: int) -> str:
    """``h:mm:ss`` as in PGN ``[%clk]`` comments; tenths appear when they are not zero.

    >>> clock_text(178_000), clock_text(3_725_400), clock_text(2_999)
    ('0:02:58', '1:02:05.4', '0:00:02.9')
    """
    tenths = max(0, ms) // 100
    seconds, tenth = divmod(tenths, 10)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    text = f"{hours}:{minute:02d}:{second:02d}"
    return f"{text}.{tenth}" if tenth else text


# ----------------------------------------------------------------------------- PGN

_PGN_TERMINATION = {
    "time": "time forfeit",
    "abandonment": "abandoned",
    "abort": "abandoned",
    "perpetual_check": "rules infraction",
}

_ENDING_WORDS = {
    "checkmate": "checkmate",
    "stalemate": "stalemate",
    "royal_capture": "capture of the royal piece",
    "repetition": "repetition",
    "perpetual_check": "perpetual check",
    "fifty_moves": "the fifty-move rule",
    "seventy_five_moves": "the seventy-five-move rule",
    "dead_position": "dead position",
    "resignation": "resignation",
    "time": "time",
    "agreement": "agreement",
    "abandonment": "abandonment",
}


def _side_names(variant: Variant) -> tuple[str, str]:
    return ("Sente", "Gote") if variant.family == "shogi" else ("White", "Black")


def _ending_sentence(record: GameRecord) -> str | None:
    """``"Black wins by resignation."``, ``"Draw by repetition."``, ``"Game aborted."``."""
    if record.termination is None:
        return None
    if record.termination == "abort":
        return "Game aborted."
    how = _ENDING_WORDS.get(record.termination, record.termination.replace("_", " "))
    if record.result == "1/2-1/2":
        return f"Draw by {how}."
    winner = record.winner
    if winner is None:
        return f"Game ended by {how}."
    return f"{_side_names(record.variant)[winner]} wins by {how}."


def _tag_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def pgn_tags(record: GameRecord, game: Game | None = None) -> dict[str, str]:
    """The PGN tag pairs of ``record``, in export order (the seven-tag roster first)."""
    game = _replay_record(record, game)
    v = record.variant
    when = record.started_at
    date = when.strftime("%Y.%m.%d") if when else "????.??.??"
    tags = {
        "Event": f"{'Rated' if record.rated else 'Casual'} {v.title} game",
        "Site": record.site,
        "Date": date,
        "Round": "-",
        "White": record.first_name,
        "Black": record.second_name,
        "Result": record.result or "*",
    }
    if record.game_id:
        tags["GameId"] = record.game_id
    if when:
        tags["UTCDate"] = date
        tags["UTCTime"] = when.strftime("%H:%M:%S")
    if record.first_rating is not None:
        tags["WhiteElo"] = str(record.first_rating)
    if record.second_rating is not None:
        tags["BlackElo"] = str(record.second_rating)
    tags["Variant"] = v.name
    tags["TimeControl"] = format_time_control(record.time_control)
    if record.termination is None:
        tags["Termination"] = "unterminated"
    else:
        tags["Termination"] = _PGN_TERMINATION.get(record.termination, "normal")
    if v.start_fen_generator is not None or not _is_standard_start(game):
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


def write_pgn(record: GameRecord, game: Game | None = None, width: int = 80) -> str:
    """``record`` as one PGN game (tags, blank line, movetext, blank line).

    ``game`` may be passed when the caller already has :func:`replay` of the record.
    """
    game = _replay_record(record, game)
    tags = pgn_tags(record, game)
    lines = [f'[{name} "{_tag_value(value)}"]' for name, value in tags.items()]
    tokens: list[str] = []
    start = game.position_at(0)
    number = start.fullmove
    for i, (move, display) in enumerate(zip(_moves_of(game), game.displays)):
        pos = game.position_at(i)
        text = pgn_move_text(pos, move, display)
        # Every move is followed by its clock comment, so the second player's moves need
        # their number ("1... e5") too.
        dots = "." if pos.turn == 0 else "..."
        tokens.append(f"{number}{dots} {text}")  # a move number stays on the line of its move
        tokens.append(f"{{ [%clk {clock_text(record.moves[i].clock_ms)}] }}")
        if pos.turn == 1:
            number += 1
    ending = _ending_sentence(record)
    if ending:
        tokens.append(f"{{ {ending} }}")
    tokens.append(tags["Result"])
    return "\n".join(lines) + "\n\n" + "\n".join(_wrap(tokens, width)) + "\n\n"


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


# ----------------------------------------------------------------------------- KIF

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

#: One-character names for board diagrams (BOD) of boards up to 9×9.
SHOGI_BOARD_KANJI = {
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
    piece = variant.t.types[code]
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
_KIF_LOSSES = {
    "resignation": "投了",
    "abandonment": "投了",
    "time": "切れ負け",
    "checkmate": "詰み",
    "stalemate": "詰み",
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
    elif term == "perpetual_check" and winner is not None:
        special = "反則負け" if winner != mover else "反則勝ち"
    elif term == "repetition":
        special = "千日手"
    elif term == "abort":
        special = "中断"
    if term == "abort":
        return special, f"まで{n}手で中断"
    if winner is not None:
        return special, f"まで{n}手で{'先手' if winner is Side.FIRST else '後手'}の勝ち"
    if term == "repetition":
        return special, f"まで{n}手で千日手"
    return special, f"まで{n}手で引き分け"


def _kif_time_control(setting: TimeSetting) -> str:
    base = _minutes_text(setting.base_ms)
    if setting.kind == "byoyomi":
        return f"{base}+秒読み{_seconds(setting.byoyomi_ms)}秒×{setting.periods}"
    return f"{base}+{_seconds(setting.increment_ms)}秒"


def _minutes_text(ms: int) -> str:
    minutes, rest = divmod(ms, 60_000)
    if not rest:
        return f"{minutes}分"
    return f"{minutes}分{_seconds(rest)}秒" if minutes else f"{_seconds(rest)}秒"


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


def write_kif(record: GameRecord, game: Game | None = None) -> str:
    """``record`` as a KIF file (UTF-8 text, first line ``#KIF version=2.0 encoding=UTF-8``).

    Shogi family only (raise ValueError otherwise). Times are UTC. A board diagram follows
    the header when the start is not the variant's standard one (boards up to 9×9; a larger
    board's start is given as a ``#開始局面`` comment with its FEN).
    """
    v = record.variant
    if v.family != "shogi":
        raise ValueError(f"KIF is for shogi variants; {v.title} is a {v.family} variant")
    game = _replay_record(record, game)
    lines = ["#KIF version=2.0 encoding=UTF-8"]
    if record.game_id:
        lines.append(f"#対局ID：{record.game_id}")
    if record.started_at:
        lines.append(f"開始日時：{_kif_datetime(record.started_at)}")
    if record.finished_at:
        lines.append(f"終了日時：{_kif_datetime(record.finished_at)}")
    lines.append(f"棋戦：{'Rated' if record.rated else 'Casual'} {v.title}")
    if record.time_control is not None:
        lines.append(f"持ち時間：{_kif_time_control(record.time_control)}")
    lines.append(f"手合割：{KIF_HANDICAP.get(v.name, v.title)}")
    lines.append(f"先手：{record.first_name}")
    lines.append(f"後手：{record.second_name}")
    start = game.position_at(0)
    if not _is_standard_start(game):
        if v.geometry.files <= 9 and v.geometry.ranks <= 9:
            lines += kif_board(start)
        else:
            lines.append(f"#開始局面：{start.fen()}")
    lines.append("手数----指手---------消費時間--")
    totals = [0, 0]
    previous_to: int | None = None
    for i, move in enumerate(_moves_of(game)):
        pos = game.position_at(i)
        text = kif_move_text(pos, move, previous_to)
        previous_to = move.to_sq
        spent = record.moves[i].spent_ms
        totals[pos.turn] += spent
        lines.append(_kif_line(i + 1, text, _kif_time(spent, totals[pos.turn])))
    special, summary = _kif_ending(record, game)
    if special:
        lines.append(_kif_line(game.ply + 1, special, None))
    if summary:
        lines.append(summary)
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- USI


def usi_move(pos: Position, move: Move) -> str:
    """``move`` (legal in ``pos``) in USI form: ``7g7f``, ``2b3c+``, ``P*5e``.

    Squares are the shogi coordinates (file number from the right, rank letter from the top):
    on 5×5 files 1–5 and ranks a–e, as Fairy-Stockfish writes Mini-Shogi in USI mode. Beyond
    9 files (Dai Shogi) the file takes two digits (``15a``): an extension, like the Lion's
    multi-leg moves, written leg by leg with commas (``8c7c,7c6c``), and its pass, ``pass``.
    """
    v = pos.variant
    t = v.t
    if move.from_sq == NULL_SQUARE:
        return f"{t.types[move.drop].symbol}*{shogi_square(pos, move.to_sq)}"
    if move.via and move.from_sq == move.to_sq and not pos.is_capture(move):
        return "pass"
    legs = [move.from_sq, *move.via, move.to_sq]
    text = ",".join(
        shogi_square(pos, legs[i]) + shogi_square(pos, legs[i + 1]) for i in range(len(legs) - 1)
    )
    return text + ("+" if move.promotion else "")


def write_usi(record: GameRecord, game: Game | None = None) -> str:
    """``position sfen <start sfen> moves <usi moves>`` (one line). Shogi family only."""
    v = record.variant
    if v.family != "shogi":
        raise ValueError(f"USI is for shogi variants; {v.title} is a {v.family} variant")
    game = _replay_record(record, game)
    start = game.position_at(0)
    text = f"position sfen {start.sfen()}"
    moves = [usi_move(game.position_at(i), m) for i, m in enumerate(_moves_of(game))]
    if moves:
        text += " moves " + " ".join(moves)
    return text + "\n"

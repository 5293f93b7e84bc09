"""The KIF writer (server.rules.export): exact lines of a known game and board diagram, and
every export read back by a small KIF reader below and replayed to the same game (Mini-Shogi,
Sho Shogi, Dai Shogi's kanji and wide coordinates); the endings' special moves and summaries.
"""

from __future__ import annotations

import re

import pytest
from export_games import lion_first, play_game, record_of

from server.rules import Game, MoveRecord, get_variant
from server.rules.export import kif_board, kif_piece_name, replay, write_kif


def test_kif_of_a_known_minishogi_game() -> None:
    moves = ["e1e4", "d5e4", "d1c2", "R@c3", "c2b3", "c3c1+", "b1c1", "a5a4", "b3d5+", "e5d5"]
    game = replay(get_variant("minishogi"), None, moves)
    record = record_of(
        game,
        id="k1",
        moves=tuple(
            MoveRecord(i, m, d, clock_ms=0, spent_ms=1_500 * i)
            for i, (m, d) in enumerate(zip(moves, game.displays, strict=True), 1)
        ),
        result="0-1",
        termination="resignation",
    )
    assert write_kif(record) == (
        "#KIF version=2.0 encoding=UTF-8\n"
        "#対局ID：k1\n"
        "開始日時：2024/05/01 12:30:05\n"
        "終了日時：2024/05/01 12:58:00\n"
        "棋戦：Casual Mini-Shogi\n"
        "持ち時間：10分+秒読み30秒×3\n"
        "手合割：5五将棋\n"
        "先手：alice\n"
        "後手：bob\n"
        "手数----指手---------消費時間--\n"
        "   1 １二飛(15)   ( 0:01/00:00:01)\n"
        "   2 同　金(21)   ( 0:03/00:00:03)\n"
        "   3 ３四角(25)   ( 0:04/00:00:06)\n"
        "   4 ３三飛打     ( 0:06/00:00:09)\n"
        "   5 ４三角(34)   ( 0:07/00:00:13)\n"
        "   6 ３五飛成(33) ( 0:09/00:00:18)\n"
        "   7 同　金(45)   ( 0:10/00:00:24)\n"
        "   8 ５二飛(51)   ( 0:12/00:00:30)\n"
        "   9 ２一角成(43) ( 0:13/00:00:37)\n"
        "  10 同　玉(11)   ( 0:15/00:00:45)\n"
        "  11 投了\n"
        "まで10手で後手の勝ち\n"
    )


def test_kif_board_diagram_for_a_non_standard_start() -> None:
    mini = get_variant("minishogi")
    game = replay(mini, "1bsk1/r3g/5/P4/K1G2[RPPbs] b - - 0 6", [])
    assert kif_board(game.position) == [
        "後手の持駒：角　銀",
        "  ５ ４ ３ ２ １",
        "+---------------+",
        "| ・v角v銀v玉 ・|一",
        "|v飛 ・ ・ ・v金|二",
        "| ・ ・ ・ ・ ・|三",
        "| 歩 ・ ・ ・ ・|四",
        "| 玉 ・ 金 ・ ・|五",
        "+---------------+",
        "先手の持駒：飛　歩二",
        "後手番",
    ]
    kif = write_kif(record_of(game, result=None, termination=None))
    assert "\n".join(kif_board(game.position)) + "\n手数----指手" in kif
    assert "まで" not in kif and "投了" not in kif
    standard = write_kif(record_of(replay(mini, None, [])))
    assert "先手の持駒" not in standard


_KIF_MOVE = re.compile(
    r"^ *(\d+) (?:(?P<pass>パス)|(?P<same>同　?)?(?P<body>\S+?)(?P<origin>\((?:\d\d|\d+,\d+)\))?(?:経(?P<via>\S+))?)"
    r"(?: +\( ?\d+:\d\d/\d\d:\d\d:\d\d\))?$"
)
_KANJI_RANKS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def _kanji_rank(text: str) -> int:
    if text.startswith("十"):
        return 10 + (_KANJI_RANKS[text[1]] if len(text) > 1 else 0)
    return _KANJI_RANKS[text]


def _split_square(text: str) -> tuple[tuple[int, int], str]:
    """``７六歩`` → ((7, 6), "歩"); ``１５十三飛龍`` → ((15, 13), "飛龍")."""
    m = re.match(r"([０-９]+)(十[一二三四五]?|[一二三四五六七八九])(.*)", text)
    assert m, text
    file = int(m[1].translate(str.maketrans("０１２３４５６７８９", "0123456789")))
    return (file, _kanji_rank(m[2])), m[3]


#: KIF piece names of standard shogi software (and Sho Shogi's two extra pieces).
KIF_SYMBOLS = {
    "玉": "K", "飛": "R", "角": "B", "金": "G", "銀": "S", "桂": "N", "香": "L", "歩": "P",
    "龍": "+R", "馬": "+B", "成銀": "+S", "成桂": "+N", "成香": "+L", "と": "+P",
    "酔象": "E", "太子": "+E",
}  # fmt: skip


def dai_kif_symbols() -> dict[str, str]:
    """Dai Shogi's KIF names (ours: no other program writes Dai Shogi KIF), checked unique."""
    dai = get_variant("daishogi")
    names = {kif_piece_name(dai, code): dai.t.types[code].symbol for code in range(1, dai.t.n + 1)}
    assert len(names) == dai.t.n
    return names


def read_kif_moves(kif: str, variant_name: str) -> Game:
    """Replay a KIF's move lines on our engine: each line must name exactly one legal move,
    by destination (or 同), piece name, 打 / 成 / 不成, origin and Lion via squares."""
    v = get_variant(variant_name)
    g = v.geometry
    symbols = dai_kif_symbols() if variant_name == "daishogi" else KIF_SYMBOLS
    header, _, body = kif.partition("手数----指手---------消費時間--\n")
    assert header
    game = Game(v)
    previous: tuple[int, int] | None = None

    def square(coords: tuple[int, int]) -> int:
        return g.square(g.files - coords[0], g.ranks - coords[1])

    for line in body.splitlines():
        if line.startswith("まで") or line.split()[1] in (
            "投了",
            "詰み",
            "千日手",
            "中断",
            "切れ負け",
        ):
            continue
        m = _KIF_MOVE.match(line)
        assert m, line
        assert int(m[1]) == game.ply + 1
        pos = game.position
        if m["pass"]:
            game.play("@@@@")
            continue
        body_text = m["body"]
        if m["same"]:
            assert previous is not None
            to, rest = previous, body_text
        else:
            to, rest = _split_square(body_text)
        drop = rest.endswith("打")
        promote = rest.endswith("成") and not rest.endswith("不成")
        symbol = symbols[re.sub(r"(打|不成|成)$", "", rest)]
        origin = None
        if m["origin"]:
            numbers = [int(x) for x in re.findall(r"\d+", m["origin"])]
            origin = (numbers[0], numbers[1]) if len(numbers) == 2 else divmod(numbers[0], 10)
        via = [
            square(_split_square(found)[0])
            for found in re.findall(
                r"[０-９]+(?:十[一二三四五]?|[一二三四五六七八九])", m["via"] or ""
            )
        ]
        candidates = [
            mv
            for mv in pos.legal_moves()
            if mv.to_sq == square(to)
            and (mv.from_sq == -1) == drop
            and (origin is None or mv.from_sq == square(origin))
            and bool(mv.promotion) == promote
            and list(mv.via) == via
            and v.t.types[mv.drop or abs(pos.board[mv.from_sq])].symbol == symbol
        ]
        assert len(candidates) == 1, (line, candidates)
        game.push(candidates[0])
        previous = to
    return game


@pytest.mark.parametrize(
    ("name", "seed"), [("minishogi", s) for s in range(6)] + [("shoshogi", s) for s in range(4)]
)
def test_kif_reads_back_to_the_same_game(name: str, seed: int) -> None:
    game = play_game(name, 300 + seed, 150)
    record = record_of(game)
    kif = write_kif(record)
    lines = kif.splitlines()
    move_lines = [ln for ln in lines if re.match(r"^ +\d+ ", ln)]
    endings = [
        ln
        for ln in move_lines
        if ln.split()[1] in ("投了", "詰み", "千日手", "反則勝ち", "反則負け")
    ]
    assert len(move_lines) - len(endings) == game.ply
    assert endings in ([], [move_lines[-1]])
    assert lines[-1].startswith(f"まで{game.ply}手で")
    assert (f"手合割：{'5五将棋' if name == 'minishogi' else '小将棋'}") in lines
    replayed = read_kif_moves(kif, name)
    assert replayed.moves == game.moves
    assert replayed.fen() == game.fen()
    # Thinking times add up per player.
    total_first = sum(m.spent_ms or 0 for i, m in enumerate(record.moves) if i % 2 == 0) // 1000
    last_first = [ln for ln in move_lines if int(ln.split()[0]) % 2 == 1 and "/" in ln][-1]
    h, mnt, s = (int(x) for x in last_first.rsplit("/", 1)[1].rstrip(")").split(":"))
    assert h * 3600 + mnt * 60 + s == total_first


def test_kif_games_exercise_drops_promotions_and_recaptures() -> None:
    text = "".join(write_kif(record_of(play_game("minishogi", 300 + s, 150))) for s in range(6))
    assert "打" in text and "成(" in text and "同" in text
    sho = "".join(write_kif(record_of(play_game("shoshogi", 300 + s, 150))) for s in range(4))
    assert "酔象" in sho


def test_kif_daishogi_kanji_and_wide_coordinates() -> None:
    game = play_game("daishogi", 7, 100, policy=lion_first)
    kif = write_kif(record_of(game))
    assert "手合割：大将棋" in kif
    assert re.search(r"\(1[0-5],\d+\)|\(\d+,1[0-5]\)", kif)
    assert "獅子" in kif
    replayed = read_kif_moves(kif, "daishogi")
    assert replayed.moves == game.moves


@pytest.mark.parametrize(
    ("termination", "result", "special", "summary"),
    [
        # After three moves the second player (gote) is to move.
        ("checkmate", "1-0", "詰み", "まで{n}手で先手の勝ち"),
        ("time", "1-0", "切れ負け", "まで{n}手で先手の勝ち"),
        ("resignation", "1-0", "投了", "まで{n}手で先手の勝ち"),
        # Sente resigned (or lost on time) while gote was to move: no special move for gote.
        ("resignation", "0-1", None, "まで{n}手で後手の勝ち"),
        ("time", "0-1", None, "まで{n}手で後手の勝ち"),
        ("perpetual_check", "0-1", "反則勝ち", "まで{n}手で後手の勝ち"),
        ("repetition", "0-1", "千日手", "まで{n}手で後手の勝ち"),
        ("repetition", "1/2-1/2", "千日手", "まで{n}手で千日手"),
        ("abort", None, "中断", "まで{n}手で中断"),
        ("royal_capture", "1-0", None, "まで{n}手で先手の勝ち"),
    ],
)
def test_kif_endings(
    termination: str, result: str | None, special: str | None, summary: str
) -> None:
    game = replay(get_variant("minishogi"), None, ["e1e4", "d5e4", "a2a3"])
    kif = write_kif(record_of(game, termination=termination, result=result))
    tail = kif.splitlines()[-2:]
    if special:
        assert tail == [f"   4 {special}", summary.format(n=3)]
    else:
        assert tail[-1] == summary.format(n=3) and tail[0].startswith("   3 ")

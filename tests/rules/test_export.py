"""PGN, KIF and USI writers (server.rules.export), checked against other programs' readers.

* PGN: python-chess's reader (``chess.pgn.read_game``) parses every export. Wild Castle games
  are replayed on python-chess's own board from the ``FEN`` tag (games where a d-file king
  castles excepted: python-chess reads ``O-O`` there as Chess960 castling); those and Spartan
  games, which python-chess has no board for, are read by python-chess's tokenizer and
  replayed with our SAN parser. Either way the final position must be ours.
* USI: Mini-Shogi and Sho Shogi exports are converted back to Fairy-Stockfish's coordinates
  (by an independent converter below) and replayed by pyffish to the same final position.
* KIF: read back by a small KIF reader below and replayed; plus exact lines of a known game.
"""

from __future__ import annotations

import io
import random
import re
from collections.abc import Callable
from datetime import UTC, datetime

import chess
import chess.pgn
import pyffish
import pytest

from server.rules import Game, IllegalMoveError, MoveRecord, Position, get_variant
from server.rules.export import (
    clock_text,
    format_time_control,
    kif_board,
    kif_piece_name,
    pgn_move_text,
    pgn_tags,
    replay,
    usi_move,
    write_kif,
    write_pgn,
    write_usi,
)
from server.rules.record import GameRecord
from server.rules.san import parse_san
from server.rules.time_control import Byoyomi, Fischer

STARTED = datetime(2024, 5, 1, 12, 30, 5, tzinfo=UTC)
FINISHED = datetime(2024, 5, 1, 12, 58, 0, tzinfo=UTC)
BLITZ = Fischer(180_000, 2_000)
BYOYOMI = Byoyomi(600_000, 30_000, 3)
SITE = "https://hub.example/g1"

Policy = Callable[[Game, list[str], random.Random], str]


# --------------------------------------------------------------------------- helpers


def lively(game: Game, moves: list[str], rng: random.Random) -> str:
    """Random play that favours promotions, drops and captures, so exports show them."""
    pos = game.position
    promotions = [m for m in moves if m.endswith("+") or re.search(r"\d[a-z]$", m)]
    if promotions and rng.random() < 0.8:
        return rng.choice(promotions)
    drops = [m for m in moves if "@" in m]
    if drops and rng.random() < 0.3:
        return rng.choice(drops)
    captures = [m for m in moves if pos.is_capture(pos.move_from_uci(m))]
    if captures and rng.random() < 0.5:
        return rng.choice(captures)
    return rng.choice(moves)


def anything(_game: Game, _move: str) -> bool:
    return True


_GAMES: dict[tuple[object, ...], Game] = {}


def lion_first(game: Game, moves: list[str], rng: random.Random) -> str:
    """Random Dai Shogi play that makes many multi-leg Lion moves and a few passes."""
    multi_leg = [m for m in moves if "," in m]
    if multi_leg and rng.random() < 0.6:
        return rng.choice(multi_leg)
    if "@@@@" in moves and rng.random() < 0.05:
        return "@@@@"
    return lively(game, [m for m in moves if m != "@@@@"] or moves, rng)


def play_game(
    name: str,
    seed: int,
    plies: int,
    policy: Policy = lively,
    start_fen: str | None = None,
    allowed: Callable[[Game, str], bool] = anything,
) -> Game:
    """A seeded random game (cached: several tests look at the same games; never mutated)."""
    key = (name, seed, plies, policy, start_fen, allowed)
    if key not in _GAMES:
        _GAMES[key] = _play(name, seed, plies, policy, start_fen, allowed)
    return _GAMES[key]


def _play(
    name: str,
    seed: int,
    plies: int,
    policy: Policy,
    start_fen: str | None,
    allowed: Callable[[Game, str], bool],
) -> Game:
    variant = get_variant(name)
    rng = random.Random(seed)
    game = Game(variant, start_fen or variant.random_start_fen(rng))
    while game.ply < plies and game.outcome() is None:
        moves = [m for m in game.legal_moves() if allowed(game, m)]
        if not moves:
            break
        game.play(policy(game, moves, rng))
    return game


def record_of(game: Game, **fields: object) -> GameRecord:
    """A record of ``game`` with made-up but distinct clocks: the mover's clock after ply i
    is 600 s - 1.3 s * i (+ a few ms), thinking time 1.2 s * i."""
    moves = tuple(
        MoveRecord(i, uci, display, 600_000 - 1_300 * i + 7 * (i % 3), spent_ms=1_200 * i)
        for i, (uci, display) in enumerate(zip(game.moves, game.displays, strict=True), 1)
    )
    outcome = game.outcome()
    values: dict[str, object] = {
        "id": "g1",
        "variant": game.variant.name,
        "moves": moves,
        "start_fen": game.start_fen,
        "first_name": "alice",
        "second_name": "bob",
        "time_control": BYOYOMI if game.variant.family == "shogi" else BLITZ,
        "speed": "rapid",
        "rated": False,
        "status": "finished",
        "created_at": STARTED,
        "started_at": STARTED,
        "finished_at": FINISHED,
        "result": outcome.result() if outcome else "1-0",
        "termination": str(outcome.termination) if outcome else "resignation",
    }
    values.update(fields)
    return GameRecord(**values)  # type: ignore[arg-type]


class SanCollector(chess.pgn.GameBuilder):
    """A python-chess game builder for variants python-chess cannot play: it keeps the SAN
    tokens its PGN tokenizer found (pushing null moves on its board) and every error."""

    def begin_game(self) -> None:
        super().begin_game()
        self.tokens: list[str] = []
        self.problems: list[str] = []

    def parse_san(self, board: chess.Board, san: str) -> chess.Move:
        self.tokens.append(san)
        return chess.Move.null()

    def handle_error(self, error: Exception) -> None:
        self.problems.append(str(error))


def read_tokens(pgn: str) -> tuple[chess.pgn.Game, list[str], list[str]]:
    builder = SanCollector()
    game = chess.pgn.read_game(io.StringIO(pgn), Visitor=lambda: builder)
    assert game is not None
    return game, builder.tokens, builder.problems


def expected_clock(ms: int) -> float:
    """What [%clk] carries: tenths of a second, rounded down."""
    return (ms // 100) / 10


# ------------------------------------------------------------------------------ PGN


def test_time_control_and_clock_texts() -> None:
    assert format_time_control(BLITZ) == "180+2"
    assert format_time_control(Fischer(300_000, 0)) == "300+0"
    assert format_time_control(Fischer(90_500, 500)) == "90.5+0.5"
    assert format_time_control(BYOYOMI) == "600+30x3"
    assert clock_text(0) == "0:00:00"
    assert clock_text(59_999) == "0:00:59.9"
    assert clock_text(3_600_000) == "1:00:00"
    assert clock_text(36_061_000) == "10:01:01"


@pytest.mark.parametrize("seed", range(8))
def test_wildcastle_pgn_replays_on_python_chess(seed: int) -> None:
    """python-chess reads the export: tags, SAN, clocks; its board reaches our position.

    A d-file king's castling is kept out (python-chess would read it as Chess960 castling;
    the next test covers it)."""

    def not_d_file_castling(game: Game, uci: str) -> bool:
        pos = game.position
        move = pos.move_from_uci(uci)
        if move.from_sq not in pos.royals[pos.turn]:
            return True
        return not (uci[0] == "d" and abs(ord(uci[2]) - ord(uci[0])) == 2)

    game = play_game("wildcastle", seed, 120, allowed=not_d_file_castling)
    record = record_of(game)
    pgn = write_pgn(record)
    read = chess.pgn.read_game(io.StringIO(pgn))
    assert read is not None
    assert [str(e) for e in read.errors] == ["unsupported variant: wildcastle"]
    headers = read.headers
    assert headers["Variant"] == "wildcastle"
    assert headers["SetUp"] == "1" and headers["FEN"] == game.start_fen
    assert (headers["White"], headers["Black"]) == ("alice", "bob")
    assert headers["Result"] == record.result
    assert headers["TimeControl"] == "180+2"
    assert headers["Date"] == "2024.05.01" and headers["UTCTime"] == "12:30:05"
    assert headers["Termination"] in ("normal", "rules infraction")
    board = chess.Board(headers["FEN"])
    sans = []
    for node in read.mainline():
        sans.append(board.san(node.move))
        board.push(node.move)
    assert sans == game.displays
    assert board.board_fen() == game.position.board_fen()
    assert board.turn == (game.position.turn == 0)
    clocks = [node.clock() for node in read.mainline()]
    assert clocks == [expected_clock(m.clock_ms or 0) for m in record.moves]


def test_wildcastle_d_file_castling_reads_back_with_our_san() -> None:
    """O-O with the king on d goes to b1 (ICS wild/1): python-chess tokenizes it, our
    parser replays it."""
    start = "r2k3r/pppppppp/8/8/8/8/PPPPPPPP/R2K3R w KQkq - 0 1"
    game = replay(get_variant("wildcastle"), start, ["d1b1", "d8f8", "a2a3", "f8g8"])
    assert game.displays == ["O-O", "O-O-O", "a3", "Kg8"]
    pgn = write_pgn(record_of(game, result=None, termination=None))
    read, tokens, _ = read_tokens(pgn)
    assert tokens == ["O-O", "O-O-O", "a3", "Kg8"]
    assert read.headers["Result"] == "*" and read.headers["Termination"] == "unterminated"
    ours = Game(get_variant("wildcastle"), read.headers["FEN"])
    for token in tokens:
        ours.push(parse_san(ours.position, token))
    assert ours.fen() == game.fen()
    assert ours.moves == ["d1b1", "d8f8", "a2a3", "f8g8"]


def movetext_moves(pgn: str) -> list[tuple[str, float | None]]:
    """Moves and [%clk] seconds of a PGN's movetext, read per the PGN grammar (symbol tokens,
    move numbers, brace comments, result) independently of our writer."""
    movetext = pgn.split("\n\n")[1]
    out: list[tuple[str, float | None]] = []
    for comment, token in re.findall(r"\{([^}]*)\}|(\S+)", movetext):
        if comment:
            clock = re.search(r"\[%clk (\d+):(\d\d):(\d\d(?:\.\d)?)\]", comment)
            if clock and out and out[-1][1] is None:
                h, m, sec = clock.groups()
                out[-1] = (out[-1][0], int(h) * 3600 + int(m) * 60 + float(sec))
        elif not re.fullmatch(r"\d+\.(\.\.)?|1-0|0-1|1/2-1/2|\*", token):
            out.append((token, None))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_spartan_pgn_replays_with_our_san(seed: int) -> None:
    """python-chess reads the tags (its tokenizer knows only KQRBNP, so the moves are read by
    the PGN grammar here) and our SAN parser replays the moves to the same position."""
    game = play_game("spartan", seed, 160)
    record = record_of(game)
    pgn = write_pgn(record)
    read, _, problems = read_tokens(pgn)
    assert problems[0] == "unsupported variant: spartan"
    assert read.headers["Variant"] == "spartan"
    assert read.headers["Result"] == record.result
    assert "FEN" not in read.headers and "SetUp" not in read.headers
    moves = movetext_moves(pgn)
    assert [san for san, _ in moves] == game.displays
    replayed = Game(get_variant("spartan"))
    for san, _ in moves:
        replayed.push(parse_san(replayed.position, san))
    assert replayed.moves == game.moves
    assert replayed.fen() == game.fen()
    assert [clock for _, clock in moves] == [expected_clock(m.clock_ms or 0) for m in record.moves]


def test_spartan_games_exercise_promotions_and_captures() -> None:
    """The seeds above are not vacuous: they contain captures, checks and promotions."""
    displays = [d for seed in range(8) for d in play_game("spartan", seed, 160).displays]
    assert any("x" in d for d in displays)
    assert any(d.endswith("+") or d.endswith("#") for d in displays)
    assert any("=" in d for d in displays)


def test_pgn_headers_and_move_numbers() -> None:
    v = get_variant("wildcastle")
    black_first = "r2k3r/pppppppp/8/8/4P3/8/PPPP1PPP/R2K3R b KQkq e3 0 7"
    game = replay(v, black_first, ["e7e5", "a2a3", "a7a6"])
    record = record_of(
        game,
        first_name='Al "the pawn" \\ice',
        first_rating_before=1520,
        second_rating_before=1480,
        rated=True,
        result="1/2-1/2",
        termination="agreement",
    )
    pgn = write_pgn(record, site=SITE)
    assert pgn.startswith(
        '[Event "Rated Wild Castle game"]\n[Site "https://hub.example/g1"]\n'
        '[Date "2024.05.01"]\n[Round "-"]\n[White "Al \\"the pawn\\" \\\\ice"]\n'
        '[Black "bob"]\n[Result "1/2-1/2"]\n'
    )
    assert '[WhiteElo "1520"]\n[BlackElo "1480"]\n' in pgn
    assert '[FEN "r2k3r/pppppppp/8/8/4P3/8/PPPP1PPP/R2K3R b KQkq e3 0 7"]' in pgn
    movetext = pgn.split("\n\n")[1]
    assert movetext == (
        "7... e5 { [%clk 0:09:58.7] } 8. a3 { [%clk 0:09:57.4] } 8... a6\n"
        "{ [%clk 0:09:56.1] } { Draw by agreement. } 1/2-1/2"
    )
    read = chess.pgn.read_game(io.StringIO(pgn))
    # python-chess keeps the escapes of a tag value as written; the tag parses intact.
    assert read is not None and read.headers["White"] == 'Al \\"the pawn\\" \\\\ice'
    assert read.headers["Black"] == "bob"
    board = chess.Board(read.headers["FEN"])
    for move in read.mainline_moves():
        board.push(move)
    assert board.board_fen() == game.position.board_fen()


def test_pgn_setup_only_when_the_start_is_not_standard() -> None:
    mini = get_variant("minishogi")
    standard = replay(mini, None, ["e1e4"])
    assert "FEN" not in pgn_tags(record_of(standard))
    # The stored start may spell the same position differently: still standard.
    same = replay(mini, "rbsgk/4p/5/P4/KGSBR[-] w 0 1", [])
    assert "FEN" not in pgn_tags(record_of(same))
    other = replay(mini, "rbsgk/4p/5/P4/KGSB1[R] w - - 0 1", [])
    tags = pgn_tags(record_of(other))
    assert (tags["SetUp"], tags["FEN"]) == ("1", "rbsgk/4p/5/P4/KGSB1[R] w - - 0 1")
    # Wild Castle draws its setups: the FEN tag is always there, even for the chess array.
    wild = get_variant("wildcastle")
    assert pgn_tags(record_of(replay(wild, None, [])))["FEN"] == wild.start_fen


@pytest.mark.parametrize(
    ("result", "termination", "tag", "sentence"),
    [
        ("1-0", "checkmate", "normal", "White wins by checkmate."),
        ("0-1", "time", "time forfeit", "Black wins by time."),
        ("0-1", "abandonment", "abandoned", "Black wins by abandonment."),
        (None, "abort", "abandoned", "Game aborted."),
        ("1/2-1/2", "fifty_moves", "normal", "Draw by the fifty-move rule."),
        (None, None, "unterminated", None),
    ],
)
def test_pgn_endings(
    result: str | None, termination: str | None, tag: str, sentence: str | None
) -> None:
    game = replay(get_variant("spartan"), None, ["e2e4"])
    pgn = write_pgn(record_of(game, result=result, termination=termination))
    assert f'[Result "{result or "*"}"]' in pgn
    assert f'[Termination "{tag}"]' in pgn
    assert pgn.rstrip().endswith(result or "*")
    if sentence:
        assert f"{{ {sentence} }}" in pgn
    else:
        assert "wins" not in pgn and "Draw" not in pgn


def test_shogi_pgn_is_pgn_safe() -> None:
    """Drops are written with @ (a bare * would end the game for a PGN reader)."""
    game = play_game("minishogi", 5, 80)
    assert any("*" in d for d in game.displays)
    pgn = write_pgn(record_of(game))
    movetext = pgn.split("\n\n")[1]
    assert "*" not in movetext
    read, _, _ = read_tokens(pgn)
    assert read.headers["Variant"] == "minishogi"
    assert read.headers["TimeControl"] == "600+30x3"
    written = re.findall(r"(\S+)\s+\{ \[%clk", movetext)
    assert written == [d.replace("*", "@") for d in game.displays]
    assert any("@" in w for w in written)


def test_dai_igui_in_pgn_is_a_capture_and_a_return() -> None:
    dai = get_variant("daishogi")
    rows = ["15"] * 15
    rows[7] = "7p7"  # a Black pawn on h8 (15 files: a..o; h is the 8th)
    rows[8] = "7L!7"  # the Lion below it on h7
    rows[14] = "K14"
    rows[0] = "14k"
    pos = Position.from_fen(dai, "/".join(rows) + " w - - 0 1")
    igui = [m for m in pos.legal_moves() if m.from_sq == m.to_sq and m.via and pos.is_capture(m)]
    assert len(igui) == 1
    game = replay(dai, pos.fen(), [pos.uci(igui[0])])
    assert game.displays == ["Lnx!8h"]
    assert pgn_move_text(pos, igui[0], game.displays[0]) == "Lnx8h-8i"
    assert usi_move(pos, igui[0]) == "8i8h,8h8i"
    assert "経" in write_kif(record_of(game))


# ------------------------------------------------------------------------------ USI


def usi_to_fsf(usi: str, files: int, ranks: int) -> str:
    """An independent reading of a USI move into Fairy-Stockfish's coordinates."""

    def square(text: str) -> str:
        number, letter = int(text[:-1]), text[-1]
        return f"{chr(ord('a') + files - number)}{ranks - (ord(letter) - ord('a'))}"

    if usi == "pass":
        return "@@@@"
    if "*" in usi:
        piece, target = usi.split("*")
        return f"{piece}@{square(target)}"
    promote = usi.endswith("+")
    body = usi.rstrip("+")
    legs = []
    for leg in body.split(","):
        first, second = re.fullmatch(r"(\d+[a-o])(\d+[a-o])", leg).groups()  # type: ignore[union-attr]
        legs.append(square(first) + square(second))
    return ",".join(legs) + ("+" if promote else "")


def sfen_to_fen(sfen: str, hands_in_brackets: bool) -> str:
    board, turn, hand, number = sfen.split()
    pieces = "" if hand == "-" else re.sub(r"(\d+)(\D)", lambda m: m[2] * int(m[1]), hand)
    fsf_turn = "w" if turn == "b" else "b"
    bracket = f"[{pieces}]" if hands_in_brackets else ""
    return f"{board}{bracket} {fsf_turn} - - 0 {(int(number) + 1) // 2}"


def normalised(fen: str) -> tuple[str, str, str]:
    """Board, sorted hand and side to move of a FEN (hand order differs between writers)."""
    fields = fen.split()
    board, _, hand = fields[0].partition("[")
    return board, "".join(sorted(hand.rstrip("]"))), fields[1]


def no_crown_prince_promotion(game: Game, uci: str) -> bool:
    """FSF and the engine disagree on promoting the Drunk Elephant while the King is attacked
    (documented in test_differential_shogi): keep such moves out of these games."""
    pos = game.position
    move = pos.move_from_uci(uci)
    return not (move.promotion and pos.variant.t.royal[move.promotion])


@pytest.mark.parametrize("name", ["minishogi", "shoshogi"])
@pytest.mark.parametrize("seed", range(6))
def test_usi_replays_on_fairy_stockfish(name: str, seed: int) -> None:
    game = play_game(name, 100 + seed, 200, allowed=no_crown_prince_promotion)
    line = write_usi(record_of(game))
    assert line.endswith("\n") and line.count("\n") == 1
    match = re.fullmatch(r"position sfen (\S+ [bw] \S+ \d+)(?: moves (.*))?\n", line)
    assert match is not None
    sfen, moves = match.groups()
    usi_moves = moves.split() if moves else []
    assert len(usi_moves) == game.ply
    v = get_variant(name)
    g = v.geometry
    fen = sfen_to_fen(sfen, v.hand_in_fen)
    assert normalised(fen) == normalised(Position.from_fen(v, v.start_fen).fen())
    fsf_moves = [usi_to_fsf(m, g.files, g.ranks) for m in usi_moves]
    assert fsf_moves == game.moves
    final = pyffish.get_fen(name, fen, fsf_moves)
    assert normalised(final) == normalised(game.fen())


def test_usi_games_exercise_drops_and_promotions() -> None:
    lines = [
        write_usi(record_of(play_game(name, 100 + seed, 200, allowed=no_crown_prince_promotion)))
        for name in ("minishogi", "shoshogi")
        for seed in range(6)
    ]
    assert any("*" in line for line in lines)
    assert sum(line.count("+") for line in lines) > 10


def test_usi_sfen_of_a_later_start() -> None:
    mini = get_variant("minishogi")
    game = replay(mini, "1bsk1/r3g/5/P4/K1G2[RPbs] w - - 0 6", ["a1b2", "b5c4"])
    assert write_usi(record_of(game)) == (
        "position sfen 1bsk1/r3g/5/P4/K1G2 b RPbs 11 moves 5e4d 4a3b\n"
    )


@pytest.mark.parametrize("seed", range(3))
def test_dai_usi_extension_round_trips(seed: int) -> None:
    """Dai Shogi is beyond USI (15 files): the documented extension reads back exactly."""

    game = play_game("daishogi", seed, 120, policy=lion_first)
    line = write_usi(record_of(game))
    moves = line.split(" moves ")[1].split()
    assert any("," in m for m in moves) or "pass" in moves
    assert any(re.match(r"1[0-5][a-o]", m) for m in moves)
    assert [usi_to_fsf(m, 15, 15) for m in moves] == game.moves


def test_usi_and_kif_refuse_chess_variants() -> None:
    game = replay(get_variant("spartan"), None, [])
    with pytest.raises(ValueError, match="shogi"):
        write_usi(record_of(game))
    with pytest.raises(ValueError, match="shogi"):
        write_kif(record_of(game))


# ------------------------------------------------------------------------------ KIF


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


def test_replay_names_the_bad_ply() -> None:
    with pytest.raises(IllegalMoveError, match=r"^move 2 \(e1e4\): "):
        replay(get_variant("minishogi"), None, ["e1e4", "e1e4"])


def test_every_registered_variant_exports_pgn() -> None:
    from server.rules import VARIANT_NAMES

    for name in VARIANT_NAMES:
        game = play_game(name, 1, 30)
        pgn = write_pgn(record_of(game))
        assert f'[Variant "{name}"]' in pgn
        assert f'[PlyCount "{game.ply}"]' in pgn
        assert pgn.count("[%clk") == game.ply

"""The PGN writer (server.rules.export), checked against python-chess's reader.

python-chess's reader (``chess.pgn.read_game``) parses every export. Wild Castle games are
replayed on python-chess's own board from the ``FEN`` tag (games where a d-file king castles
excepted: python-chess reads ``O-O`` there as Chess960 castling); those and Spartan games,
which python-chess has no board for, are read by python-chess's tokenizer and replayed with our
SAN parser. Either way the final position must be ours. Also the time-control and clock texts,
and ``replay``, which builds the games of every writer's tests.
"""

from __future__ import annotations

import io
import re

import chess
import chess.pgn
import pytest
from export_games import BLITZ, BYOYOMI, play_game, record_of

from server.rules import Game, IllegalMoveError, Position, get_variant
from server.rules.export import (
    clock_text,
    format_time_control,
    pgn_move_text,
    pgn_tags,
    replay,
    usi_move,
    write_kif,
    write_pgn,
)
from server.rules.san import parse_san
from server.rules.time_control import Fischer

SITE = "https://hub.example/g1"


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

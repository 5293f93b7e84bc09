"""A computer analysis in the exports: PGN ``[%eval]`` read back by python-chess (the oracle),
judgement glyphs as NAGs, and KIF ``*`` comment lines."""

from __future__ import annotations

import io
import random
import re

import chess
import chess.pgn
from export_games import play_game, record_of

from server.rules import Game
from server.rules.analysis import FirstPlayerScore, PlyEval, advices
from server.rules.export import write_kif, write_pgn, write_usi


def fake_analysis(game: Game, seed: int) -> list[PlyEval]:
    """A made-up analysis: random walks of scores, a mate near the end, each entry's best move
    another legal move than the one played (the engine's own best move is never judged) and
    its line that move."""
    rng = random.Random(seed)
    evals = []
    cp = 0
    last = game.ply if game.outcome() is None else game.ply - 1
    for ply in range(last + 1):
        cp += rng.choice([-450, -120, -30, 0, 40, 150, 380])
        mates = ply == last and ply > 2
        score = FirstPlayerScore(mate=rng.choice([-2, 3])) if mates else FirstPlayerScore(cp)
        played = game.moves[ply : ply + 1]
        others = [m for m in legal_texts(game, ply) if m not in played]
        line = tuple(others[:1])
        evals.append(PlyEval(ply, score, line[0] if line else None, line, 10 + ply % 5, 1000, 90))
    return evals


def legal_texts(game: Game, ply: int) -> list[str]:
    """The legal moves of the position after ``ply`` moves, as texts."""
    return sorted(Game(game.variant, game.position_at(ply).fen()).legal_moves())


def without_tags(pgn: str, *names: str) -> str:
    """The PGN without some tags: python-chess evaluates ``[%eval]`` relative to its board
    (``node.turn()``), and has no board for our variants' names; Wild Castle without castling
    is chess from its FEN, and a shogi game read with null moves alternates turns as ours."""
    return "\n".join(
        line for line in pgn.splitlines() if not any(line.startswith(f'[{n} "') for n in names)
    )


def pov_of(score: FirstPlayerScore) -> chess.engine.PovScore:
    if score.mate is not None:
        return chess.engine.PovScore(chess.engine.Mate(score.mate), chess.WHITE)
    return chess.engine.PovScore(chess.engine.Cp(score.cp or 0), chess.WHITE)


NAG_OF = {"inaccuracy": chess.pgn.NAG_DUBIOUS_MOVE, "mistake": chess.pgn.NAG_MISTAKE,
          "blunder": chess.pgn.NAG_BLUNDER}


def test_wildcastle_evals_read_back_by_python_chess() -> None:
    def no_castling(game: Game, uci: str) -> bool:  # python-chess reads d-file castling as 960
        pos = game.position
        return pos.move_from_uci(uci).from_sq not in pos.royals[pos.turn]

    for seed in range(4):
        game = play_game("wildcastle", seed, 30, allowed=no_castling)
        evals = fake_analysis(game, seed)
        pgn = write_pgn(record_of(game), game, analysis=evals)
        read = chess.pgn.read_game(io.StringIO(without_tags(pgn, "Variant")))
        assert read is not None and not read.errors
        nodes = list(read.mainline())
        assert len(nodes) == game.ply
        judged = {a.ply: a for a in advices(evals)}
        assert judged, "the made-up analysis should judge some moves"
        by_ply = {e.ply: e for e in evals}
        for ply, node in enumerate(nodes, 1):
            expected = by_ply.get(ply)
            assert node.eval() == (pov_of(expected.score) if expected else None), (ply, node.comment)
            assert node.clock() is not None
            advice = judged.get(ply)
            assert node.nags == ({NAG_OF[advice.judgement]} if advice else set())
            if advice:
                assert advice.judgement.capitalize() + "." in node.comment
        board = chess.Board(game.start_fen)
        for node in nodes:
            board.push(node.move)
        assert board.fen().split()[0] == game.fen().split()[0]


def movetext_comments(pgn: str) -> list[tuple[str, str]]:
    """(move token, its comment) pairs of a PGN's movetext, per the PGN grammar."""
    out: list[tuple[str, str]] = []
    for comment, token in re.findall(r"\{([^}]*)\}|(\S+)", pgn.split("\n\n")[1]):
        if comment:  # a move's comments joined (the last move's is followed by the ending's)
            out[-1] = (out[-1][0], f"{out[-1][1]} {comment}")
        elif not re.fullmatch(r"\d+\.(\.\.)?|1-0|0-1|1/2-1/2|\*", token):
            out.append((token, ""))
    return out


def test_shogi_and_spartan_pgn_evals_read_back_by_python_chess() -> None:
    """python-chess has no board for these (its tokenizer skips shogi moves): its own comment
    parser reads each move's comment, on a game of null moves (turns alternate as ours)."""
    for name in ("minishogi", "shoshogi", "daishogi", "spartan"):
        game = play_game(name, 5, 24)
        evals = fake_analysis(game, 5)
        pgn = write_pgn(record_of(game), game, analysis=evals)
        moves = movetext_comments(pgn)
        assert len(moves) == game.ply
        judged = {a.ply: a for a in advices(evals)}
        read = chess.pgn.Game()
        node: chess.pgn.GameNode = read
        for _token, comment in moves:
            node = node.add_variation(chess.Move.null(), comment=comment)
        by_ply = {e.ply: e for e in evals}
        for ply, (node, (token, _)) in enumerate(zip(read.mainline(), moves, strict=True), 1):
            expected = by_ply.get(ply)
            assert node.eval() == (pov_of(expected.score) if expected else None)
            advice = judged.get(ply)
            glyph = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}
            assert token.endswith(glyph[advice.judgement]) if advice else token[-1] not in "?!"
        # Without an analysis the export is as before: no eval, no glyph.
        assert "%eval" not in write_pgn(record_of(game), game)


def test_pgn_eval_format() -> None:
    game = play_game("wildcastle", 1, 4)
    evals = [PlyEval(0, FirstPlayerScore(20), "e2e4"), PlyEval(1, FirstPlayerScore(-35)),
             PlyEval(2, FirstPlayerScore(mate=-3)), PlyEval(3, FirstPlayerScore(mate=2))]
    pgn = write_pgn(record_of(game), game, analysis=evals)
    assert "[%eval -0.35]" in pgn and "[%eval #-3]" in pgn and "[%eval #2]" in pgn
    assert '[Annotator "Variant Hub computer analysis"]' in pgn


def test_kif_comment_lines() -> None:
    game = play_game("minishogi", 2, 8)
    evals = [PlyEval(p, FirstPlayerScore(0 if p < 3 else -600),
                     game.moves[p] if p < game.ply else None,
                     tuple(game.moves[p : p + 2]), 9) for p in range(game.ply + 1)]
    # Move 3 was not the engine's choice (its own best move is never judged).
    other = next(m for m in legal_texts(game, 2) if m != game.moves[2])
    evals[2] = PlyEval(2, FirstPlayerScore(0), other, (other,), 9)
    evals[-1] = PlyEval(game.ply, FirstPlayerScore(mate=-4), None, (), 9)
    kif = write_kif(record_of(game), game, analysis=evals).splitlines()
    analysis_lines = [line for line in kif if line.startswith("**解析 0 ○ 深さ 9 評価値 ")]
    assert len(analysis_lines) == game.ply  # one per move (the start has no move line)
    assert analysis_lines[-1].endswith("評価値 -詰4")
    move_3 = next(i for i, line in enumerate(kif) if line.startswith("   3 "))
    assert kif[move_3 + 1].startswith("**解析 0 ○ 深さ 9 評価値 -600 読み筋 ")
    assert kif[move_3 + 2].startswith("*大悪手 最善手 ")  # first player's 0 → -600: a blunder
    # The line shown is the moves' KIF texts with side marks.
    second = kif[move_3 + 1].split("読み筋 ")[1].split()
    assert second[0][0] == ("▲" if game.position_at(3).turn == 0 else "△")
    # USI has no comments; KIF without an analysis has none either.
    assert not any(line.startswith("*") for line in write_kif(record_of(game), game).splitlines()[2:])
    assert write_usi(record_of(game), game).count("\n") == 1

"""Conditional premoves in the hub (docs/correspondence.md): lines checked when set, the reply
played once the opponent's move is stored, lines advanced or dropped, restores (manual clock)."""

from __future__ import annotations

from typing import Any

from hub_harness import FISCHER_TC, Harness, one, only, player, room_of, start_game

from server.hub.effects import MoveAppended, PremovesSet
from server.hub.lobby import GameTerms
from server.rules import Game, MoveRecord, Side, get_variant
from server.rules.time_control import DAY_MS, Correspondence

DAY = {"kind": "correspondence", "days": 1}
TERMS = GameTerms("minishogi", Correspondence(1), False)
START_FEN = Game(get_variant("minishogi")).fen()
# Mini-Shogi, after 1. a1b2 (p1 first): two lines of p1's, the first two replies deep.
DEEP = ["c5c4", "c1c2", "b5a4", "b1c1"]
SHORT = ["a5a2", "b2c3"]


def corr_game(h: Harness) -> str:
    """p1 (conn 1, first) and p2 (conn 2) in a 1-day game; p1 has played a1b2."""
    h.connect(1, player("p1"))
    h.connect(2, player("p2"))
    h.send(1, "match", to="P2", variant="minishogi", tc=DAY, colour="first", ack="m")
    h.send(2, "accept", id=one(h.inbox(1), "ack").d["challenge"], ack="a")
    game_id = str(one(h.inbox(2), "ack").d["game"])
    h.send(1, "join", game=game_id)
    h.send(2, "join", game=game_id)
    h.send(1, "move", game=game_id, ply=1, move="a1b2")
    h.clear()
    return game_id


def set_lines(h: Harness, game_id: str, lines: list[list[str]], conn: int = 1) -> list[Any]:
    h.send(conn, "premoves", game=game_id, lines=lines, ack="p")
    return h.inbox(conn)


def moves_of(h: Harness, game_id: str) -> list[str]:
    return [m.uci for m in room_of(h, game_id).records]


def written(h: Harness) -> list[PremovesSet]:
    return [p.record for p in h.committed if isinstance(p.record, PremovesSet)]


def test_the_reply_is_played_once_the_opponents_move_is_stored_and_lines_advance() -> None:
    h = Harness()
    game_id = corr_game(h)
    answer = set_lines(h, game_id, [DEEP, SHORT])
    assert one(answer, "ack").d == {"game": game_id}
    shown = one(answer, "premoves").d
    assert shown == {"game": game_id, "ply": 1, "lines": [DEEP, SHORT]}
    assert written(h) == [PremovesSet(game_id, Side.FIRST, 1, (tuple(DEEP), tuple(SHORT)))]
    assert not only(h.inbox(2), "premoves")  # the opponent never sees them

    h.auto_commit = False
    h.send(2, "move", game=game_id, ply=2, move="c5c4")
    assert moves_of(h, game_id) == ["a1b2"]  # nothing before the opponent's move is stored
    h.commit()  # c5c4 stored: the reply is played (not shown until stored)
    assert moves_of(h, game_id) == ["a1b2", "c5c4"]
    assert [p.record.move.uci for p in h.pending if isinstance(p.record, MoveAppended)] == ["c1c2"]
    assert [m.d["uci"] for m in only(h.inbox(2), "move")] == ["c5c4"]
    h.commit()
    assert moves_of(h, game_id) == ["a1b2", "c5c4", "c1c2"]
    assert [m.d["uci"] for m in only(h.inbox(2), "move")] == ["c1c2"]
    assert [m.d for m in only(h.inbox(1), "premoves")] == [
        {"game": game_id, "ply": 3, "lines": [["b5a4", "b1c1"]]}
    ]
    assert not only(h.inbox(2), "premoves")
    assert not h.pending

    h.auto_commit = True
    h.send(2, "move", game=game_id, ply=4, move="b5a4")
    assert moves_of(h, game_id)[-2:] == ["b5a4", "b1c1"]
    assert one(h.inbox(1), "premoves").d == {"game": game_id, "ply": 5, "lines": []}
    assert written(h)[-1] == PremovesSet(game_id, Side.FIRST, 5, ())  # exhausted: deleted
    assert not room_of(h, game_id).state.premoves


def test_an_other_opponent_move_drops_the_lines() -> None:
    h = Harness()
    game_id = corr_game(h)
    set_lines(h, game_id, [DEEP, SHORT])
    h.send(2, "move", game=game_id, ply=2, move="a5a3")
    assert moves_of(h, game_id) == ["a1b2", "a5a3"]  # no reply
    assert one(h.inbox(1), "premoves").d["lines"] == []
    assert written(h)[-1] == PremovesSet(game_id, Side.FIRST, 2, ())
    assert not room_of(h, game_id).state.premoves


def test_bad_lines_are_refused_with_the_line_and_move_and_nothing_is_stored() -> None:
    h = Harness()
    game_id = corr_game(h)
    cases = [
        ([SHORT, ["c5c4", "a1a5"]], "illegal_premove", "Line 2, move 2"),
        ([["a5a2", "b2c3", "d5c4", "c3c4"]], "illegal_premove", "Line 1, move 4"),  # mated
        ([["zz", "b2c3"]], "illegal_premove", "Line 1, move 1"),
        ([SHORT, ["a5a2", "b2b3"]], "premoves_conflict", "Line 2 answers a5a2 with b2b3"),
    ]
    for lines, code, text in cases:
        error = one(set_lines(h, game_id, lines), "error").d
        assert error["code"] == code and text in error["message"], error
    # the player to move cannot set any; nor can a spectator
    error = one(set_lines(h, game_id, [["a1b2", "a5a2"]], conn=2), "error").d
    assert error["code"] == "premoves_not_now"
    h.connect(3, player("p3"))
    assert one(set_lines(h, game_id, [SHORT], conn=3), "error").d["code"] == "not_a_player"
    assert written(h) == [] and not room_of(h, game_id).state.premoves
    assert moves_of(h, game_id) == ["a1b2"]


def test_real_time_games_have_no_premoves() -> None:
    h = Harness()
    game_id = start_game(h, tc=FISCHER_TC)
    h.send(1, "move", game=game_id, ply=1, move="a1b2")
    h.clear()
    assert one(set_lines(h, game_id, [SHORT]), "error").d["code"] == "premoves_correspondence"
    h.send(1, "premoves_clear", game=game_id, ack="c")
    assert one(h.inbox(1), "error").d["code"] == "premoves_correspondence"
    assert written(h) == []


def test_clear_and_a_failed_write() -> None:
    h = Harness()
    game_id = corr_game(h)
    set_lines(h, game_id, [SHORT])
    h.send(1, "premoves_clear", game=game_id, ack="c")
    answer = h.inbox(1)
    assert one(answer, "ack").d == {"game": game_id}
    assert one(answer, "premoves").d["lines"] == []
    assert written(h)[-1] == PremovesSet(game_id, Side.FIRST, 1, ())

    h.auto_commit = False
    set_lines(h, game_id, [SHORT])
    h.fail("disk full")
    error = one(h.inbox(1), "error").d
    assert error["code"] == "premoves_not_saved" and "disk full" in error["message"]
    h.auto_commit = True
    h.send(2, "move", game=game_id, ply=2, move="a5a2")
    assert moves_of(h, game_id) == ["a1b2", "a5a2"]  # not in force: no reply


def test_the_games_end_drops_the_lines() -> None:
    h = Harness()
    game_id = corr_game(h)
    set_lines(h, game_id, [SHORT])
    h.send(2, "resign", game=game_id)
    assert room_of(h, game_id).finished
    assert one(h.inbox(1), "premoves").d["lines"] == []
    assert written(h)[-1].lines == ()


def restore(h: Harness, game_id: str, moves: list[str], rows: list[PremovesSet]) -> None:
    game = Game(get_variant("minishogi"))
    records = []
    for uci in moves:
        played = game.play(uci)
        records.append(MoveRecord(played.ply, played.uci, played.display, DAY_MS, 0, None))
    h.run(
        h.hub.restore_game(
            game_id,
            TERMS,
            (player("p1"), player("p2")),
            START_FEN,
            records,
            h.now,
            turn_started_ms=h.now,
            premoves=rows,
        )
    )


def test_a_restored_room_plays_an_owed_reply_and_keeps_the_rest() -> None:
    h = Harness()
    row = PremovesSet("r1", Side.FIRST, 1, (tuple(DEEP),))
    restore(h, "r1", ["a1b2", "c5c4"], [row])  # the process died before the reply
    assert moves_of(h, "r1") == ["a1b2", "c5c4", "c1c2"]
    assert room_of(h, "r1").state.premoves[Side.FIRST].lines == (("b5a4", "b1c1"),)
    # a room restored before the opponent's move: the owner sees its lines on joining
    restore(h, "r2", ["a1b2"], [PremovesSet("r2", Side.FIRST, 1, (tuple(SHORT),))])
    h.connect(1, player("p1"))
    h.send(1, "join", game="r2")
    assert one(h.inbox(1), "premoves").d == {"game": "r2", "ply": 1, "lines": [SHORT]}
    h.connect(2, player("p2"))
    h.send(2, "join", game="r2")
    assert not only(h.inbox(2), "premoves")
    h.send(2, "move", game="r2", ply=2, move="a5a2")
    assert moves_of(h, "r2") == ["a1b2", "a5a2", "b2c3"]


def test_a_reply_illegal_at_its_time_is_not_played_and_the_lines_are_dropped() -> None:
    h = Harness()
    row = PremovesSet("r3", Side.FIRST, 1, (("c5c4", "a1a5"),))  # a row no check let through
    restore(h, "r3", ["a1b2", "c5c4"], [row])
    assert moves_of(h, "r3") == ["a1b2", "c5c4"]
    assert not room_of(h, "r3").state.premoves
    assert written(h) == [PremovesSet("r3", Side.FIRST, 2, ())]


def test_premove_line_answers_the_position_after_a_sequence_and_changes_nothing() -> None:
    h = Harness()
    game_id = corr_game(h)
    room = room_of(h, game_id)
    fen, legal = room.state.game.fen(), room.state.game.legal_moves()

    def line(moves: list[str], conn: int = 1) -> Any:
        h.send(conn, "premove_line", game=game_id, moves=moves, ack="l")
        answer = h.inbox(conn)
        assert len(answer) == 1 and answer[0].a == "l", answer
        return answer[0]

    here = line([])
    assert here.t == "premove_line"
    assert here.d == {
        "game": game_id, "ply": 1, "moves": [], "displays": [], "fen": fen, "turn": "second",
        "legal": legal, "check": False, "result": None,
    }  # fmt: skip
    after = line(DEEP[:3]).d
    assert after["moves"] == DEEP[:3] and len(after["displays"]) == 3
    assert after["turn"] == "first" and "b1c1" in after["legal"]
    assert after["fen"] != fen and after["ply"] == 1
    refused = line(["c5c4", "c1c2", "zz"])
    assert refused.t == "error" and refused.d["code"] == "illegal_premove"
    assert refused.d["message"].startswith("Move 3 (zz): illegal move"), refused.d
    refused = line(["c5c4", "c5c4"])  # the same piece cannot move twice
    assert refused.d["code"] == "illegal_premove" and "Move 2 (c5c4)" in refused.d["message"]
    assert line(["c5c4"], conn=2).d["code"] == "premoves_not_now"  # p2 is to move
    h.connect(3, player("p3"))
    h.clear()
    assert line([], conn=3).d["code"] == "not_a_player"
    h.send(1, "premove_line", game="nope", moves=[], ack="l")
    assert one(h.inbox(1), "error").d["code"] == "no_such_game"
    # read-only: nothing written, nobody else told, the game as it was
    assert written(h) == [] and not h.pending and not room.state.premoves
    assert not h.inbox(2) and moves_of(h, game_id) == ["a1b2"]
    assert room.state.game.fen() == fen and room.state.game.legal_moves() == legal
    assert room.state.game.ply == 1


def test_premove_line_in_a_real_time_game_is_refused() -> None:
    h = Harness()
    game_id = start_game(h, tc=FISCHER_TC)
    h.send(1, "move", game=game_id, ply=1, move="a1b2")
    h.clear()
    h.send(1, "premove_line", game=game_id, moves=["c5c4"], ack="l")
    assert one(h.inbox(1), "error").d["code"] == "premoves_correspondence"

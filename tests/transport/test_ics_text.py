"""The ICS protocol core without sockets: command words, terms, moves, boards, lines, and a
session fed hub messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from server.hub.commands import Command, JoinCommand, MoveCommand, SeekCommand
from server.rules import Game, IllegalMoveError, InvalidMoveError, Position, get_variant
from server.rules.time_control import Byoyomi, Fischer
from server.transport.ics.games import GameNumbers, GameView, clock_ms
from server.transport.ics.lines import (
    challenge_text,
    computer_notice,
    creating_lines,
    end_line,
    end_reason,
    seek_line,
    sought_line,
)
from server.transport.ics.parse import (
    CommandLine,
    TermsError,
    looks_like_move,
    move_to_uci,
    parse_terms,
    split_command,
)
from server.transport.ics.session import IcsSession, ListedPlayer
from server.transport.ics.style12 import Board12, holdings_line, style12_line, verbose_move
from server.transport.ics.variants import ics_variant, variant_by_word

# --------------------------------------------------------------------------- command words


def test_command_words_resolve_like_fics() -> None:
    assert split_command("observe 12") == CommandLine("observe", "12")
    assert split_command("OBS 12") == CommandLine("observe", "12")
    assert split_command("unobs") == CommandLine("unobserve", "")
    assert split_command("sou") == CommandLine("sought", "")
    assert split_command("t alice hi there") == CommandLine("tell", "alice hi there")
    assert split_command("bye") == CommandLine("quit", "")
    assert split_command("s") == 'Ambiguous command "s". Matches: say seek set smoves sought style'
    assert split_command("frobnicate now") == "frobnicate: Command not found."


def test_terms_of_seek_and_match() -> None:
    default = parse_terms([])
    assert (default.ics.name, default.control, default.rated) == (
        "spartan",
        Fischer(120_000, 12_000),
        False,
    )
    wild = parse_terms(["3", "2", "rated", "white", "wild", "1", "1400-1800", "manual"])
    assert wild.ics.name == "wildcastle" and wild.control == Fischer(180_000, 2_000)
    assert (wild.rated, wild.colour, wild.rating_range, wild.manual) == (
        True,
        "first",
        (1400, 1800),
        True,
    )
    assert parse_terms(["5"]).control == Fischer(300_000, 0)
    byoyomi = parse_terms(["5", "10", "minishogi", "byoyomi/3", "b"])
    assert byoyomi.control == Byoyomi(300_000, 10_000, 3) and byoyomi.colour == "second"
    assert parse_terms(["w1"]).ics.name == "wildcastle"
    assert parse_terms(["5x5+5_shogi"]).ics.name == "minishogi"
    for bad, words in [
        ("Unknown seek/match term", ["chess960"]),
        ("Invalid time control", ["0", "0"]),
        ("Invalid time control", ["500", "0"]),
        ("at most two numbers", ["1", "2", "3"]),
        ("Byoyomi has 1 to 10 periods", ["5", "10", "byoyomi/11"]),
        ("Invalid rating range", ["1800-1400"]),
        ("no such wild variant", ["wild", "22"]),
    ]:
        with pytest.raises(TermsError, match=bad):
            parse_terms(words)


def test_variant_words_and_letters() -> None:
    assert ics_variant("wildcastle").kind == "wild/1"
    assert variant_by_word("WILD/1") is ics_variant("wildcastle")
    mini = ics_variant("minishogi")
    assert [mini.letter(s) for s in ("K", "G", "S", "+S", "+P", "+R", "+B")] == list("KGSVTDH")
    assert (mini.symbol("d"), mini.symbol("G"), mini.symbol("Q")) == ("+R", "G", None)
    assert ics_variant("daishogi").letter("+L!") == "L"  # Dai Shogi: ambiguous letters


# ----------------------------------------------------------------------------------- moves


def _position(variant: str, *moves: str) -> Position:
    game = Game(get_variant(variant))
    for move in moves:
        game.play(move)
    return game.position


def test_moves_typed_the_fics_way() -> None:
    spartan = ics_variant("spartan")
    start = _position("spartan")
    assert move_to_uci("e2e4", start, spartan) == "e2e4"
    assert move_to_uci("e2-e4", start, spartan) == "e2e4"
    assert move_to_uci("Nf3", start, spartan) == "g1f3"
    assert move_to_uci("e7e8=q", start, spartan) == "e7e8q"  # shape only: legality is the hub's
    assert move_to_uci("b2b1=K", start, spartan) == "b2b1k"
    mini = ics_variant("minishogi")
    position = _position("minishogi", "a1b2", "a5a2", "b2a2")
    assert move_to_uci("p@c3", position, mini) == "P@c3"
    assert move_to_uci("P*c3", position, mini) == "P@c3"
    assert move_to_uci("c4c5=+", position, mini) == "c4c5+"
    assert move_to_uci("c4c5+", position, mini) == "c4c5+"
    assert move_to_uci("c4c5==", position, mini) == "c4c5"
    assert move_to_uci("D@c3", position, mini) == "+R@c3"  # (the hub refuses it)
    with pytest.raises(InvalidMoveError):
        move_to_uci("Nf3", position, mini)
    with pytest.raises(IllegalMoveError):
        move_to_uci("Nf6", start, spartan)
    with pytest.raises(InvalidMoveError):
        move_to_uci("X@c3", position, mini)


def test_castling_with_a_d_file_king_is_o_o_towards_a1() -> None:
    wild = ics_variant("wildcastle")
    fen = "rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w KQkq - 0 1"
    game = Game(get_variant("wildcastle"), fen)
    for move in ("b1c3", "b8c6", "b2b3", "b7b6", "c1b2", "c8b7"):
        game.play(move)
    position = game.position
    short = move_to_uci("o-o", position, wild)
    assert short == "d1b1"
    assert verbose_move(position, short, wild) == ("o-o", "O-O")
    assert looks_like_move("o-o") and looks_like_move("O-O-O") and looks_like_move("Nf3")
    assert not looks_like_move("observe")


# ---------------------------------------------------------------------------------- boards


def test_style12_of_the_spartan_start() -> None:
    spartan = ics_variant("spartan")
    info = Board12(7, "alice", "bob", 1, 5, 3, 300_000, 299_123, ms=True, ticking=True)
    line = style12_line(_position("spartan"), spartan, info)
    assert line == (
        "<12> lgkcckwl hhhhhhhh -------- -------- -------- -------- PPPPPPPP RNBQKBNR W -1 1 1 0 0 "
        "0 7 alice bob 1 5 3 39 34 300000 299123 1 none (0:00.000) none 0 1 0"
    )
    seconds = style12_line(
        _position("spartan"), spartan, Board12(7, "a", "b", 0, 5, 3, 300_000, 299_123)
    )
    assert " 300 299 1 none (0:00) none 0 0 0" in seconds


def test_style12_after_a_double_push_and_a_drop() -> None:
    wild = ics_variant("wildcastle")
    before = _position("wildcastle")
    after = _position("wildcastle", "e2e4")
    fields = style12_line(after, wild, Board12(1, "a", "b", -1, 1, 0, 0, 0, double_push=4)).split()
    assert fields[9:11] == ["B", "4"]  # black to move, double push on the e-file
    assert verbose_move(before, "e2e4", wild) == ("P/e2-e4", "Pe2-e4")
    mini = ics_variant("minishogi")
    position = _position("minishogi", "a1b2", "a5a2", "b2a2")
    assert holdings_line(position, mini, 3) == "<b1> game 3 white [R] black [P]"
    assert verbose_move(position, "R@c3", mini) == ("R/@@-c3", "R@c3")
    promoting = _position("minishogi", "e1e4", "e5e4", "d1a4", "d5d4")
    assert verbose_move(promoting, "a4c2+", mini)[0] == "B/a4-c2=+"


def test_clocks_show_the_time_until_the_flag() -> None:
    byoyomi = {"kind": "byoyomi", "main_s": 60, "period_s": 10, "periods": 3}
    assert clock_ms({"ms": 5_000, "periods": 3, "period_ms": 10_000}, byoyomi) == 35_000
    assert clock_ms({"ms": 0, "periods": 2, "period_ms": 4_000}, byoyomi) == 14_000
    assert clock_ms({"ms": 7_000}, {"kind": "fischer", "base_s": 60, "inc_s": 1}) == 7_000


# ----------------------------------------------------------------------------------- lines

ALICE = {"id": "u1", "name": "alice", "guest": False, "rating": 1612, "provisional": False}
GUEST = {"id": "g1", "name": "Guest-abc", "guest": True, "rating": None, "provisional": True}
FISCHER = {"kind": "fischer", "base_s": 300, "inc_s": 3}


def test_game_start_and_end_lines() -> None:
    assert creating_lines(7, ALICE, GUEST, "wildcastle", False, FISCHER) == [
        "Creating: alice (1612) Guest-abc (++++) unrated wild/1 5 3",
        "{Game 7 (alice vs. Guest-abc) Creating unrated wild/1 match.}",
    ]
    assert end_line(
        7, "alice", "bob", end_reason("resignation", "1-0", "alice", "bob", 9), "1-0"
    ) == ("{Game 7 (alice vs. bob) bob resigns} 1-0")
    assert end_reason("checkmate", "0-1", "alice", "bob", 4) == "alice checkmated"
    assert end_reason("repetition", "1/2-1/2", "a", "b", 20) == "Game drawn by repetition"
    assert end_reason("time", "1-0", "alice", "bob", 30) == "bob forfeits on time"
    assert end_reason("abort", None, "a", "b", 1) == "Game aborted on move 1"
    # why, when the end event says (since 1027e08): who made no first move, who aborted
    assert end_reason("abort", None, "a", "b", 0, "no_first_move") == (
        "Game aborted on move 1: a made no first move in time"
    )
    assert end_reason("abort", None, "a", "b", 1, "no_first_move") == (
        "Game aborted on move 1: b made no first move in time"
    )
    assert end_reason("abort", None, "a", "b", 1, "second_aborted") == (
        "Game aborted on move 1 by b"
    )
    assert end_line(3, "a", "b", "Game aborted on move 1", None).endswith("} *")


def test_seek_and_challenge_lines() -> None:
    seek = {"id": 8, "player": ALICE, "variant": "minishogi", "rated": True, "colour": "first",
            "range": [1400, 1800], "manual": False,
            "tc": {"kind": "byoyomi", "main_s": 300, "period_s": 10, "periods": 3}}  # fmt: skip
    assert seek_line(seek) == (
        "<s> 8 w=alice ti=00 rt=1612  t=5 i=10 r=r tp=minishogi c=W rr=1400-1800 a=t f=f"
    )
    assert sought_line(seek).split() == ["8", "1612", "alice", "5", "10", "rated", "minishogi",
                                         "byoyomi/3", "[white]", "1400-1800"]  # fmt: skip
    challenge = {"id": 4, "from": GUEST, "to": ALICE, "variant": "spartan", "rated": False,
                 "colour": "first", "tc": FISCHER}  # fmt: skip
    assert challenge_text(challenge) == (
        "Guest-abc (++++) [white] alice (1612) unrated spartan 5 3."
    )
    assert computer_notice(GUEST) == []


def test_titles_where_fics_shows_them_and_not_in_game_lines() -> None:
    """FICS marks a computer ``(C)`` and a guest ``(U)`` in ``sought``, sets ti= bits 0x2 and
    0x1 in ``<s>``, and warns of a computer opponent in a challenge; game lines carry handles
    only (clients read them)."""
    robo = {"id": "r", "name": "robo", "guest": False, "bot": True, "rating": 1500}
    seek = {"id": 9, "player": robo, "variant": "spartan", "rated": False, "colour": "random",
            "range": None, "manual": False, "tc": FISCHER}  # fmt: skip
    assert " ti=02 " in seek_line(seek)
    assert sought_line(seek).split()[2] == "robo(C)"
    assert sought_line({**seek, "player": GUEST}).split()[2] == "Guest-abc(U)"
    assert " ti=01 " in seek_line({**seek, "player": GUEST})
    computer = {"id": "computer", "name": "Computer", "guest": False, "computer": True}
    assert computer_notice(computer) == ["--** Computer is a computer **--"]
    assert computer_notice(robo) == ["--** robo is a computer **--"]
    assert creating_lines(7, robo, ALICE, "spartan", False, FISCHER) == [
        "Creating: robo (1500) alice (1612) unrated spartan 5 3",
        "{Game 7 (robo vs. alice) Creating unrated spartan match.}",
    ]


# --------------------------------------------------------------------------------- session


class FakeHost:
    def __init__(self) -> None:
        self.numbers = GameNumbers()
        self.store = None
        self.reads = None
        self.tells: list[tuple[str, str, str]] = []
        self.delayed: list[Callable[[], None]] = []

    def online(self) -> list[ListedPlayer]:
        return [ListedPlayer("alice", False, True)]

    def tell(self, sender: str, name: str, text: str) -> bool:
        self.tells.append((sender, name, text))
        return name == "carol"

    def later(self, delay_s: float, call: Callable[[], None]) -> None:
        self.delayed.append(call)

    def requester(self, name: str) -> str:
        return f"account:{name}"


def _session() -> tuple[IcsSession, list[Command], list[str], FakeHost]:
    sent: list[Command] = []
    written: list[str] = []
    host = FakeHost()
    session = IcsSession(ALICE, sent.append, written.extend, host)
    return session, sent, written, host


SNAPSHOT: dict[str, Any] = {
    "game": "g8", "variant": "minishogi", "tc": FISCHER, "rated": False, "status": "started",
    "role": "first", "players": {"first": ALICE, "second": GUEST},
    "start_fen": "rbsgk/4p/5/P4/KGSBR[] w - - 0 1", "moves": [], "displays": [], "ply": 0,
    "fen": "rbsgk/4p/5/P4/KGSBR[] w - - 0 1",
    "clocks": {"first": {"ms": 300_000}, "second": {"ms": 300_000}, "running": None},
}  # fmt: skip


async def test_a_session_plays_a_game_from_hub_messages() -> None:
    session, sent, written, _host = _session()
    session.on_message({"t": "game_start", "d": {"game": "g8", "side": "first", "opponent": GUEST}})
    session.on_message({"t": "game", "d": SNAPSHOT, "v": 1})
    assert written[:2] == [
        "Creating: alice (1612) Guest-abc (++++) unrated minishogi 5 3",
        "{Game 1 (alice vs. Guest-abc) Creating unrated minishogi match.}",
    ]
    assert written[2].startswith("<12> rbsgk ----p ----- P---- KGSBR W ")
    assert written[3] == "<b1> game 1 white [] black []"
    written.clear()
    await session.on_line("a1b2")
    assert isinstance(sent[-1], MoveCommand) and (sent[-1].ply, sent[-1].move) == (1, "a1b2")
    session.on_message(
        {"t": "error", "a": sent[-1].ack, "d": {"code": "illegal_move", "message": "x"}}
    )
    assert written == ["Illegal move (a1b2)."]
    written.clear()
    move = {"game": "g8", "ply": 1, "uci": "a1b2", "display": "K-4d", "side": "first",
            "fen": "rbsgk/4p/5/PK3/1GSBR[] b - - 1 1", "spent_ms": 1250,
            "clocks": {"first": {"ms": 300_000}, "second": {"ms": 300_000}, "running": None}}  # fmt: skip
    session.on_message({"t": "move", "d": move, "v": 2})
    fields = written[0].split()
    assert fields[6:8] == ["B", "-1"] and (fields[13], fields[16]) == ("1", "-1")  # opponent's move
    assert fields[-6:-3] == ["K/a1-b2", "(0:01)", "a1b2"]
    written.clear()
    await session.on_line("e5e4")
    assert len(sent) == 2  # a move is sent even off turn: the hub answers "not your turn"
    session.on_message(
        {"t": "error", "a": sent[-1].ack, "d": {"code": "not_your_turn", "message": "x"}}
    )
    assert written == ["It is not your move."]
    written.clear()
    session.on_message({"t": "end", "v": 3, "d": {"game": "g8", "result": "0-1", "winner": "second",
                                                  "termination": "resignation", "clocks": {}}})  # fmt: skip
    assert written == ["{Game 1 (alice vs. Guest-abc) alice resigns} 0-1"]
    written.clear()
    await session.on_line("a2a3")
    assert written == ["You are not playing a game."]


async def test_a_session_refuses_bad_input_without_asking_the_hub() -> None:
    session, sent, written, host = _session()
    for line in ["resign", "draw", "seek 5 5 chess960", "play", "unseek x", "observe",
                 "frobnicate", "accept", "withdraw bob", "set style 1", "e2e4"]:  # fmt: skip
        await session.on_line(line)
    assert sent == []
    assert written == [
        "You are not playing a game.",
        "You are not playing a game.",
        'Unknown seek/match term "chess960". Variants: minishogi, shoshogi, wild/1, spartan, daishogi.',
        'Usage: play <seek index> (see "sought").',
        "Usage: unseek [index]",
        "Usage: observe <game number or player name>",
        "frobnicate: Command not found.",
        "You have no pending offers from other players.",
        "There is no offer to bob.",
        "Only style 12 boards are available here.",
        "You are not playing a game.",
    ]
    written.clear()
    await session.on_line("$tell carol hello")
    await session.on_line("tell dave hello")
    assert host.tells == [("alice", "carol", "hello"), ("alice", "dave", "hello")]
    assert written[0] == "(told carol)" and written[1].startswith("dave is not logged in")


async def test_a_session_seeks_and_reports_the_posting() -> None:
    session, sent, written, _host = _session()
    await session.on_line("seek 5 10 minishogi byoyomi/2 rated")
    command = sent[-1]
    assert isinstance(command, SeekCommand)
    assert (command.variant, command.control, command.rated) == (
        "minishogi",
        Byoyomi(300_000, 10_000, 2),
        True,
    )
    session.on_message({"t": "ack", "a": command.ack, "d": {"seek": 12}})
    assert written == ["Your seek has been posted with index 12."]


def test_a_game_view_replays_a_snapshot_for_its_last_move() -> None:
    snapshot = {**SNAPSHOT, "moves": ["a1b2", "a5a2"], "displays": ["K-4d", "Rx5d"],
                "fen": "1bsgk/4p/5/rK3/1GSBR[p] w - - 0 2"}  # fmt: skip
    view = GameView.from_snapshot(snapshot, 5)
    assert (view.verbose, view.pretty, view.ply) == ("R/a5-a2", "a5a2", 2)
    lines = view.board_lines(ms=False)
    assert lines[0].split()[1:6] == ["-bsgk", "----p", "-----", "rK---", "-GSBR"]
    assert lines[1] == "<b1> game 5 white [] black [P]"


def test_a_double_push_is_reported_for_any_pawn_advance_of_two() -> None:
    snapshot = {**SNAPSHOT, "variant": "wildcastle", "moves": ["e2e4"], "displays": ["e4"],
                "start_fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}  # fmt: skip
    fields = GameView.from_snapshot(snapshot, 2).board_lines(ms=True)[0].split()
    assert fields[9:15] == ["B", "4", "1", "1", "1", "1"]
    assert fields[-6:-3] == ["P/e2-e4", "(0:00.000)", "e4"]


def test_boards_up_to_15_by_15_and_byoyomi_clocks_in_style12() -> None:
    dai = ics_variant("daishogi")
    line = style12_line(_position("daishogi"), dai, Board12(3, "a", "b", 0, 10, 0, 5, 5)).split()
    board = line[1:16]
    assert len(board) == 15 and all(len(rank) == 15 for rank in board)
    assert line[16] == "W"
    snapshot = {**SNAPSHOT, "tc": {"kind": "byoyomi", "main_s": 60, "period_s": 10, "periods": 3},
                "clocks": {"first": {"ms": 0, "periods": 2, "period_ms": 7_500},
                           "second": {"ms": 42_000, "periods": 3, "period_ms": 10_000},
                           "running": "first"}}  # fmt: skip
    fields = GameView.from_snapshot(snapshot, 1).board_lines(ms=True)[0].split()
    # main time, then byoyomi: 1 minute shown with no increment; clocks until the flag falls
    assert fields[17:19] == ["1", "0"] and fields[21:23] == ["17500", "72000"]


class BrokenStore:
    """A store whose reads fail (the database is unreachable)."""

    async def list_games(self, **filters: Any) -> Any:
        raise ConnectionError("database unreachable")

    async def get_game(self, game_id: str) -> Any:
        raise ConnectionError("database unreachable")


async def test_a_failing_store_is_reported_and_the_session_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sent: list[Command] = []
    written: list[str] = []
    host = FakeHost()
    host.store = BrokenStore()  # type: ignore[assignment]
    session = IcsSession(ALICE, sent.append, written.extend, host)
    await session.on_line("history")
    await session.on_line("games")
    assert written == [
        "history: the server could not do that just now; try again.",
        "games: the server could not do that just now; try again.",
    ]
    assert "ICS command 'history' failed" in caplog.text
    await session.on_line("seek 5 0")
    assert isinstance(sent[-1], SeekCommand)


async def test_a_game_running_at_login_continues_after_the_clients_setup() -> None:
    """Before 4d4fcc7, the board of a game running at login came before XBoard's setup (``iset ms
    1``, ``style 12``) and without ``{Game N …} Continuing``, so XBoard drew a Spartan army as
    chess pieces and the clocks in seconds. The game is joined once the client's first lines
    are read (or after RESUME_WAIT_S), and its board follows FICS's continuation line."""
    session, sent, written, host = _session()
    session.on_message({"t": "hello", "d": {"game": "g8", "seeks": [], "challenges": []}})
    assert sent == [] and len(host.delayed) == 1  # the wait for a silent client
    await session.on_line("$iset ms 1")
    await session.on_line("$style 12")
    assert not any(isinstance(c, JoinCommand) for c in sent)
    host.delayed.pop()()  # after the lines of that read
    (join,) = [c for c in sent if isinstance(c, JoinCommand)]
    assert join.game_id == "g8"
    host.delayed.pop()()  # the wait's end: joined already, nothing more
    assert [c for c in sent if isinstance(c, JoinCommand)] == [join]
    written.clear()
    session.on_message({"t": "game", "d": {**SNAPSHOT, "clocks": {"first": {"ms": 299_500}, "second": {"ms": 300_000}, "running": None}}, "v": 1})
    assert written[0] == "{Game 1 (alice vs. Guest-abc) Continuing unrated minishogi match.}"
    assert written[1].startswith("<12> rbsgk ") and " 299500 300000 " in written[1]
    written.clear()
    session.on_message({"t": "game", "d": SNAPSHOT, "v": 2})  # a later snapshot: no new line
    assert written[0].startswith("<12> ")


def test_the_game_hello_names_is_joined_again_while_it_changes_servers() -> None:
    session, sent, written, host = _session()
    session.on_message({"t": "hello", "d": {"game": "g8", "seeks": [], "challenges": []}})
    host.delayed.pop()()  # the client said nothing: joined after RESUME_WAIT_S
    for code in ("node_unavailable", "busy"):  # its server died; the takeover is pending
        join = sent.pop()
        assert isinstance(join, JoinCommand) and join.game_id == "g8" and sent == []
        session.on_message({"t": "error", "d": {"code": code, "message": "…"}, "a": join.ack})
        assert len(host.delayed) == 1 and sent == []
        host.delayed.pop()()
    join = sent.pop()
    assert isinstance(join, JoinCommand) and join.game_id == "g8"
    session.on_message({"t": "ack", "d": {"game": "g8"}, "a": join.ack})
    assert host.delayed == [] and sent == [] and written == []


def test_a_game_hello_named_that_ended_is_not_joined_again() -> None:
    session, sent, _written, host = _session()
    session.on_message({"t": "hello", "d": {"game": "g8", "seeks": [], "challenges": []}})
    host.delayed.pop()()
    join = sent.pop()
    session.on_message({"t": "error", "d": {"code": "no_such_game", "message": "…"}, "a": join.ack})
    assert host.delayed == [] and sent == []

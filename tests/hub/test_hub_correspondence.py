"""Correspondence games in the hub: days per move, first-move aborts, no clock, many games
beside one real-time game, deadlines of restored games (manual clock, no event loop)."""

from __future__ import annotations

from typing import Any

import pytest
from hub_harness import FISCHER_TC, Harness, one, player, room_of

from server.hub.effects import GameFinished, MoveAppended
from server.hub.hub import HubConfig
from server.hub.lobby import GameTerms
from server.rules import MoveRecord
from server.rules.time_control import DAY_MS, Correspondence, Fischer, Unlimited

DAY = {"kind": "correspondence", "days": 1}
UNLIMITED = {"kind": "unlimited"}
MINUTE = 60_000
LINE = ["a1b2", "a5a2", "b2c3"]  # Mini-Shogi; "d5c4" then mates


def corr_game(h: Harness, tc: dict[str, Any] = DAY, first: int = 1, second: int = 2) -> str:
    """``first``'s connection challenges ``second``'s (both connected already), which accepts."""
    h.send(first, "match", to=f"P{second}", variant="minishogi", tc=tc, colour="first", ack="m")
    challenge = one(h.inbox(first), "ack").d["challenge"]
    h.send(second, "accept", id=challenge, ack="a")
    game_id = one(h.inbox(second), "ack").d["game"]
    h.commit_all()
    h.clear()
    return str(game_id)


def connect_all(h: Harness, count: int) -> None:
    for n in range(1, count + 1):
        h.connect(n, player(f"p{n}"))
    h.clear()


def move(h: Harness, conn: int, game_id: str, ply: int, uci: str) -> list[Any]:
    h.inbox(conn)  # what came before
    h.send(conn, "move", game=game_id, ply=ply, move=uci, ack=f"{game_id}/{ply}")
    return h.inbox(conn)


def ended(h: Harness, game_id: str) -> GameFinished:
    finishes = [
        p.record
        for p in h.committed
        if isinstance(p.record, GameFinished) and p.record.game_id == game_id
    ]
    assert len(finishes) == 1, finishes
    return finishes[0]


def test_a_move_at_23_59_is_in_time_and_the_allowance_resets() -> None:
    h = Harness()
    connect_all(h, 2)
    game_id = corr_game(h)
    room = room_of(h, game_id)
    assert room.clock.running == 0 and room.clock.deadline() == h.now + DAY_MS
    assert room.state.abort_at is None
    h.advance(DAY_MS - MINUTE)  # 23 h 59 min
    h.tick()
    assert one(move(h, 1, game_id, 1, "a1b2"), "ack").d["ply"] == 1
    assert room.clock.deadline() == h.now + DAY_MS  # the second player's full day from now
    h.advance(DAY_MS - 1)
    h.tick()
    assert one(move(h, 2, game_id, 2, "a5a2"), "ack").d["ply"] == 2
    assert room.records[-1].clock_ms == DAY_MS  # the allowance is whole after each move
    h.advance(DAY_MS - MINUTE)
    h.tick()
    assert not room.finished
    h.advance(MINUTE)  # 24 h 00 min after the last move: lost on time, exactly then
    h.tick()
    assert room.finished and room.termination == "time" and room.result == "0-1"
    assert ended(h, game_id).ended_ms == h.now and ended(h, game_id).server_decided


@pytest.mark.parametrize("moves", [0, 1])
def test_a_first_move_not_made_within_the_days_aborts_the_game(moves: int) -> None:
    """Whichever of the two first moves is missing (lichess's rule)."""
    h = Harness()
    connect_all(h, 2)
    game_id = corr_game(h, {"kind": "correspondence", "days": 2})
    room = room_of(h, game_id)
    if moves:
        move(h, 1, game_id, 1, "a1b2")
    h.advance(2 * DAY_MS - 1)
    h.tick()
    assert not room.finished
    h.advance(1)
    h.tick()
    assert (
        room.termination == "abort" and room.state.detail == "no_first_move" and room.result is None
    )
    assert h.hub.games_of("p1") == h.hub.games_of("p2") == []


def test_unlimited_never_flags_and_absence_does_not_matter() -> None:
    h = Harness()
    connect_all(h, 2)
    game_id = corr_game(h, UNLIMITED)
    room = room_of(h, game_id)
    h.disconnect(2)
    assert h.inbox(1) == []  # no "gone", no countdown
    assert h.hub.next_deadline() is None
    h.advance(365 * DAY_MS)
    h.tick()
    h.connect(2, player("p2"))
    h.send(2, "join", game=game_id)
    assert one(move(h, 1, game_id, 1, "a1b2"), "ack")
    h.advance(100 * DAY_MS)
    assert one(move(h, 2, game_id, 2, "a5a2"), "ack")
    assert not room.finished and h.hub.next_deadline() is None
    h.send(1, "abandon_claim", game=game_id, outcome="win", ack=9)
    assert one(h.inbox(1), "error").d["code"] == "opponent_present"


def test_correspondence_games_beside_one_real_time_game() -> None:
    h = Harness()
    connect_all(h, 4)
    corr = [corr_game(h, DAY, 1, 2), corr_game(h, DAY, 1, 3), corr_game(h, UNLIMITED, 4, 1)]
    h.send(1, "seek", variant="minishogi", tc=FISCHER_TC, colour="first")
    h.send(2, "seek", variant="minishogi", tc=FISCHER_TC, colour="second", ack="s")
    h.commit_all()
    realtime = h.hub.active_game("p1")
    assert realtime is not None and realtime not in corr
    assert h.hub.games_of("p1") == [realtime, *sorted(corr)]
    h.clear()
    # A second real-time game is refused; another correspondence game is not.
    h.send(1, "seek", variant="minishogi", tc=FISCHER_TC, ack="x")
    assert one(h.inbox(1), "error").d["code"] == "already_playing"
    corr.append(corr_game(h, {"kind": "correspondence", "days": 14}, 3, 1))
    # Each move lands in its own game.
    for conn, game_id in ((1, corr[0]), (1, corr[1]), (4, corr[2]), (3, corr[3]), (1, realtime)):
        assert one(move(h, conn, game_id, 1, "a1b2"), "ack").d == {"game": game_id, "ply": 1}
    for game_id in [*corr, realtime]:
        assert [r.uci for r in room_of(h, game_id).records] == ["a1b2"]
    # Leaving: the real-time game counts the absence, the correspondence games do not.
    h.disconnect(1)
    # p2 plays both the real-time game and corr[0] against p1: one "gone", the real-time one's
    gone = [m for m in h.inbox(2) if m.t == "gone"]
    assert len(gone) == 1 and room_of(h, realtime).absent[0] is not None
    h.connect(1, player("p1"))
    hello = one(h.inbox(1), "hello").d
    assert hello["game"] == realtime and hello["correspondence"] == sorted(corr)


def test_a_move_in_a_game_that_is_not_yours_is_refused_and_changes_nothing() -> None:
    h = Harness()
    connect_all(h, 3)
    game_id = corr_game(h, DAY, 1, 2)
    room = room_of(h, game_id)
    before = (room.log.version, list(room.records), room.clock.state())
    reply = move(h, 3, game_id, 1, "a1b2")
    assert one(reply, "error").d["code"] == "not_a_player"
    assert (room.log.version, list(room.records), room.clock.state()) == before
    assert h.pending == []


def test_the_limit_of_correspondence_games() -> None:
    h = Harness(HubConfig(max_correspondence_games=3))
    connect_all(h, 3)
    games = [corr_game(h, DAY, 1, 2) for _ in range(3)]
    h.send(1, "match", to="P3", variant="minishogi", tc=DAY, ack="m")
    assert one(h.inbox(1), "error").d["code"] == "correspondence_limit"
    h.send(3, "match", to="P1", variant="minishogi", tc=DAY, ack="m")
    assert one(h.inbox(3), "error").d["code"] == "player_busy"
    h.send(1, "seek", variant="minishogi", tc=DAY, ack="s")
    assert one(h.inbox(1), "error").d["code"] == "correspondence_limit"
    # A real-time game is still possible, and a finished game frees a place.
    h.send(3, "match", to="P1", variant="minishogi", tc=FISCHER_TC, ack="m")
    assert one(h.inbox(3), "ack")
    h.send(1, "resign", game=games[0], ack="r")
    h.commit_all()
    h.clear()
    assert len(corr_game(h, DAY, 2, 1)) > 0


def test_stored_games_join_hello_and_the_limit_until_they_end() -> None:
    # The adapter lists the player's stored (cold) games at the connection: hello lists them
    # with the games in memory, the limit counts them, a game ending here leaves the count,
    # and the list is forgotten with the player's last connection.
    h = Harness(HubConfig(max_correspondence_games=3))
    h.run(h.hub.connect(1, player("p1"), h.now, stored_correspondence=["coldA", "coldB"]))
    h.connect(2, player("p2"))
    hello = [m for m in h.inbox(1) if m.t == "hello"]
    assert hello[0].d["correspondence"] == ["coldA", "coldB"]
    game_id = corr_game(h, DAY, 1, 2)
    assert h.hub.games_of("p1") == sorted(["coldA", "coldB", game_id])
    h.send(1, "seek", variant="minishogi", tc=DAY, ack="s")
    assert one(h.inbox(1), "error").d["code"] == "correspondence_limit"
    h.send(2, "match", to="P1", variant="minishogi", tc=DAY, ack="m")
    assert one(h.inbox(2), "error").d["code"] == "player_busy"
    h.hub.state.drop_game("p1", "coldA")  # as when its room ends here
    h.send(1, "seek", variant="minishogi", tc=DAY, ack="s")
    assert one(h.inbox(1), "ack")
    h.disconnect(1)
    assert "p1" not in h.hub.state.stored_correspondence


def test_the_default_limit_is_200() -> None:
    h = Harness()
    connect_all(h, 2)
    for _ in range(200):
        corr_game(h, UNLIMITED)
    assert len(h.hub.games_of("p1")) == 200
    h.send(1, "match", to="P2", variant="minishogi", tc=UNLIMITED, ack="m")
    assert one(h.inbox(1), "error").d["code"] == "correspondence_limit"


def test_a_correspondence_seek_pairs_without_withdrawing_the_others() -> None:
    h = Harness()
    connect_all(h, 3)
    h.send(1, "seek", variant="minishogi", tc=DAY, ack="a")
    h.send(1, "seek", variant="minishogi", tc={"kind": "correspondence", "days": 3}, ack="b")
    h.send(2, "seek", variant="minishogi", tc=DAY, ack="c")
    h.commit_all()
    game_id = one(h.inbox(2), "ack").d["game"]
    assert h.hub.games_of("p1") == [game_id]
    assert [s.terms.control for s in h.hub.seeks()] == [Correspondence(3)]


def test_takebacks_and_rematches() -> None:
    h = Harness()
    connect_all(h, 2)
    game_id = corr_game(h, DAY)
    move(h, 1, game_id, 1, "a1b2")
    h.send(1, "takeback_offer", game=game_id, ack="t")
    assert one(h.inbox(1), "error").d["code"] == "takeback_correspondence"
    h.send(1, "resign", game=game_id)
    h.commit_all()
    h.send(1, "rematch_offer", game=game_id)
    h.send(2, "rematch_accept", game=game_id, ack="r")
    h.commit_all()
    new_game = str(one(h.inbox(2), "ack").d["new_game"])
    assert room_of(h, new_game).terms.control == Correspondence(1)
    assert h.hub.games_of("p1") == [new_game]


# --- restore: the deadline is absolute ------------------------------------------------------

TERMS = GameTerms("minishogi", Correspondence(1), rated=False)
START_FEN = "rbsgk/4p/5/P4/KGSBR[] w - - 0 1"


def stored(h: Harness) -> list[MoveRecord]:
    return [p.record.move for p in h.committed if isinstance(p.record, MoveAppended)]


def two_moves() -> list[MoveRecord]:
    h = Harness()
    connect_all(h, 2)
    game_id = corr_game(h, DAY)
    move(h, 1, game_id, 1, "a1b2")
    move(h, 2, game_id, 2, "a5a2")
    return stored(h)


def test_restore_charges_the_downtime() -> None:
    """The hub restarts 23 h into the turn: a move at 23 h 59 min is in time, the flag falls
    at 24 h 00 min."""
    h = Harness()
    turn_started = h.now - 23 * 60 * MINUTE
    players = (player("p1"), player("p2"))
    moves = two_moves()
    h.run(
        h.hub.restore_game(
            "c1", TERMS, players, START_FEN, moves, h.now, turn_started_ms=turn_started
        )
    )
    room = room_of(h, "c1")
    assert room.clock.deadline() == turn_started + DAY_MS
    assert h.hub.next_deadline() == turn_started + DAY_MS
    assert room.absent == [None, None]
    h.connect(1, player("p1"))
    h.send(1, "join", game="c1")
    h.advance(59 * MINUTE)
    h.tick()
    assert one(move(h, 1, "c1", 3, "b2c3"), "ack")
    h.run(
        h.hub.restore_game(
            "c2", TERMS, players, START_FEN, moves, h.now, turn_started_ms=turn_started
        )
    )
    h.tick(turn_started + DAY_MS)
    assert room_of(h, "c2").termination == "time"
    assert ended(h, "c2").ended_ms == turn_started + DAY_MS


def test_restore_after_the_deadline_ends_the_game_at_once_as_a_time_loss() -> None:
    h = Harness()
    players = (player("p1"), player("p2"))
    turn_started = h.now - DAY_MS - 5 * MINUTE
    effects = h.run(
        h.hub.restore_game(
            "c3", TERMS, players, START_FEN, two_moves(), h.now, turn_started_ms=turn_started
        )
    )
    finishes = [e for e in effects if getattr(e, "record", None).__class__ is GameFinished]
    assert len(finishes) == 1
    room = room_of(h, "c3")
    assert room.finished and room.termination == "time" and room.result == "0-1"
    assert ended(h, "c3").ended_ms == turn_started + DAY_MS
    h.tick(h.now + 2 * DAY_MS)
    assert len([p for p in h.committed if isinstance(p.record, GameFinished)]) == 1
    assert h.hub.games_of("p1") == []


def test_restore_before_both_first_moves_aborts_after_the_deadline() -> None:
    h = Harness()
    players = (player("p1"), player("p2"))
    h.run(
        h.hub.restore_game(
            "c4", GameTerms("minishogi", Unlimited(), False), players, START_FEN, [], h.now
        )
    )
    assert h.hub.next_deadline() is None
    h.run(
        h.hub.restore_game(
            "c5", TERMS, players, START_FEN, [], h.now, turn_started_ms=h.now - DAY_MS
        )
    )
    assert room_of(h, "c5").state.detail == "no_first_move"
    assert h.hub.games_of("p1") == ["c4"]


# --- cold games: a quiet load, and unloading an idle room -------------------------------------


def test_a_quiet_restore_tells_nobody_and_an_idle_room_unloads() -> None:
    """``restore_game(announce=False)`` (a cold game loaded for a command) sends no
    ``game_start`` and joins nobody; ``unload`` drops the room only with nobody in it, and only
    a registered players' correspondence game."""
    h = Harness()
    players = (player("p1"), player("p2"))
    h.connect(1, players[0])
    h.clear()
    turn_started = h.now - MINUTE
    assert h.run(
        h.hub.restore_game(
            "c1", TERMS, players, START_FEN, two_moves(), h.now,
            turn_started_ms=turn_started, announce=False,
        )
    ) == []  # fmt: skip
    assert h.inbox(1) == [] and room_of(h, "c1").members == {}
    assert h.hub.games_of("p1") == ["c1"]
    h.send(1, "join", game="c1")
    assert not h.hub.unload("c1")  # someone is in the room
    h.send(1, "leave", game="c1")
    assert h.hub.unload("c1")
    assert h.hub.room("c1") is None and h.hub.games_of("p1") == []
    assert h.hub.next_deadline() is None
    assert not h.hub.unload("c1")  # gone already

    guest = (player("p1"), player("g1", guest=True))
    h.run(h.hub.restore_game("c2", TERMS, guest, START_FEN, two_moves(), h.now, announce=False))
    assert not h.hub.unload("c2")  # a guest's id would not survive the reload
    blitz = GameTerms("minishogi", Fischer(60_000), rated=False)
    real_time, effects = h.hub.start_paired_game(player("p3"), player("p4"), blitz, h.now)
    h.run(effects)
    h.commit_all()
    assert not h.hub.unload(real_time)

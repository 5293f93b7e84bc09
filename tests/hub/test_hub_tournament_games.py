"""A tournament's games in the hub: ``Hub.start_paired_game`` (two given players, one maybe
offline, the game naming its tournament and round) and ``berserk``."""

from __future__ import annotations

import pytest
from hub_harness import Harness, one, player, room_of

from server.hub.effects import BerserkMarked, GameCreated, GameFinished
from server.hub.errors import ErrorCode
from server.hub.lobby import GameTerms, TournamentTag
from server.rules import Game, MoveRecord, Side, get_variant
from server.rules.time_control import Fischer

TAG = TournamentTag("T0urnam1", 3, berserk=True)
TERMS = GameTerms("wildcastle", Fischer(60_000, 2_000), False, TAG)


def paired(
    h: Harness, terms: GameTerms = TERMS, *, online: tuple[bool, bool] = (True, True)
) -> str:
    alice, bob = player("alice", variant="wildcastle"), player("bob", variant="wildcastle")
    for conn, who, here in ((1, alice, online[0]), (2, bob, online[1])):
        if here:
            h.connect(conn, who)
    game_id, effects = h.hub.start_paired_game(alice, bob, terms, h.now, game_id="Gam3Id01")
    assert game_id == "Gam3Id01"
    h.run(effects)
    return game_id


def test_the_paired_game_names_its_tournament_and_round() -> None:
    h = Harness(auto_commit=False)
    game_id = paired(h)
    created = h.pending[0].record
    assert isinstance(created, GameCreated) and created.tournament == TAG
    assert created.first.player_id == "alice" and created.second.player_id == "bob"
    assert [m.t for m in h.inbox(1)] == ["hello"]  # nothing before the row is stored
    h.commit_all()
    start = one(h.inbox(1), "game_start")
    assert start.d["tournament"] == {"id": "T0urnam1", "round": 3, "berserk": True}
    assert start.d["side"] == "first"
    snapshot = one(h.inbox(2), "game")
    assert snapshot.d["tournament"]["id"] == "T0urnam1" and snapshot.d["game"] == game_id
    assert h.hub.active_game("alice") == game_id == h.hub.active_game("bob")


def test_an_absent_player_gets_the_game_and_loses_it_by_not_moving() -> None:
    h = Harness()
    game_id = paired(h, online=(False, True))
    room = room_of(h, game_id)
    assert room.started and room.absent[Side.FIRST] is not None
    h.advance(30_000)  # the first-move window
    h.tick()
    finished = [p.record for p in h.committed if isinstance(p.record, GameFinished)]
    assert len(finished) == 1
    end = finished[0]
    assert end.result is None and end.plies == 0 and end.tournament == TAG
    assert h.hub.active_game("bob") is None


def test_the_entry_refuses_what_the_director_must_not_ask() -> None:
    h = Harness()
    paired(h)
    alice, bob, carol = (player(n, variant="wildcastle") for n in ("alice", "bob", "carol"))
    with pytest.raises(ValueError, match="already running"):
        h.hub.start_paired_game(carol, player("dave"), TERMS, h.now, game_id="Gam3Id01")
    with pytest.raises(ValueError, match="already playing"):
        h.hub.start_paired_game(carol, alice, TERMS, h.now)
    with pytest.raises(ValueError, match="themself"):
        h.hub.start_paired_game(carol, carol, TERMS, h.now)
    assert len(h.hub.state.rooms) == 1 and bob.id in h.hub.state.playing


def test_a_tournament_game_cannot_be_aborted() -> None:
    h = Harness()
    game_id = paired(h)
    h.clear()
    h.send(1, "abort", ack=5, game=game_id)
    error = one(h.inbox(1), "error")
    assert error.d["code"] == ErrorCode.ABORT_TOO_LATE and error.a == 5
    assert room_of(h, game_id).started


def test_berserk_halves_the_own_clock_once_before_the_first_move() -> None:
    h = Harness()
    game_id = paired(h)
    h.clear()
    h.send(2, "berserk", ack=1, game=game_id)
    event = one(h.inbox(1), "berserk")
    assert event.d["side"] == "second"
    assert event.d["clocks"]["second"]["ms"] == 30_000
    assert event.d["clocks"]["first"]["ms"] == 60_000
    assert one(h.inbox(2), "ack").a == 1
    h.send(2, "berserk", ack=2, game=game_id)  # twice
    assert one(h.inbox(2), "error").d["code"] == ErrorCode.NOT_BERSERKABLE
    room = room_of(h, game_id)
    first_move = room.game.legal_moves()[0]
    h.send(1, "move", game=game_id, ply=1, move=first_move)
    h.clear()
    h.send(1, "berserk", ack=3, game=game_id)  # after one's own first move
    assert one(h.inbox(1), "error").d["code"] == ErrorCode.NOT_BERSERKABLE
    h.send(1, "resign", game=game_id)
    end = [p.record for p in h.committed if isinstance(p.record, GameFinished)][-1]
    assert end.berserk == (False, True) and end.result == "0-1"


@pytest.mark.parametrize(
    "terms",
    [
        GameTerms("wildcastle", Fischer(60_000, 0), False),  # not a tournament game
        GameTerms("wildcastle", Fischer(60_000, 0), False, TournamentTag("T0urnam1", 1)),
    ],
    ids=["no-tournament", "berserk-not-allowed"],
)
def test_berserk_only_where_allowed(terms: GameTerms) -> None:
    h = Harness()
    game_id = paired(h, terms)
    h.clear()
    h.send(1, "berserk", ack=1, game=game_id)
    assert one(h.inbox(1), "error").d["code"] == ErrorCode.NOT_BERSERKABLE
    assert room_of(h, game_id).clock.time(Side.FIRST).main_ms == 60_000


def test_no_takeback_and_no_rematch_in_a_tournament_game() -> None:
    """A casual tournament game (where a takeback would otherwise be allowed) refuses both
    offers with their own codes, before and after its end; nothing reaches the opponent."""
    h = Harness()
    game_id = paired(h)  # TERMS: casual
    room = room_of(h, game_id)
    h.send(1, "move", game=game_id, ply=1, move=room.game.legal_moves()[0])
    h.clear()
    h.send(1, "takeback_offer", ack=1, game=game_id)
    assert one(h.inbox(1), "error").d["code"] == ErrorCode.TAKEBACK_TOURNAMENT
    h.send(1, "rematch_offer", ack=2, game=game_id)
    assert [m.d["code"] for m in h.inbox(1)] == [ErrorCode.REMATCH_TOURNAMENT]
    assert h.inbox(2) == []
    assert room.state.offer_boxes["takeback"].pending_from is None
    h.send(2, "resign", game=game_id)
    assert room.finished
    h.clear()
    for conn, kind in ((1, "rematch_offer"), (2, "rematch_accept"), (2, "rematch_decline")):
        h.send(conn, kind, ack=3, game=game_id)
    assert [m.d["code"] for m in h.inbox(1)] == [ErrorCode.REMATCH_TOURNAMENT]
    assert [m.d["code"] for m in h.inbox(2)] == [ErrorCode.REMATCH_TOURNAMENT] * 2
    assert room.state.offer_boxes["rematch"].pending_from is None


def test_berserk_is_stored_before_it_applies_and_drops_the_increment() -> None:
    """The berserk waits for its row (``BerserkMarked``); once stored the side's clock is the
    berserk control's: half the base, no increment (the opponent keeps theirs)."""
    h = Harness(auto_commit=False)
    game_id = paired(h)  # Fischer 60 s + 2 s
    h.commit_all()
    room = room_of(h, game_id)
    h.clear()
    h.send(1, "berserk", ack=1, game=game_id)
    assert h.inbox(1) == [] and h.inbox(2) == []  # nothing until stored
    marked = h.pending[0].record
    assert marked == BerserkMarked(game_id, True, False)
    assert room.clock.time(Side.FIRST).main_ms == 60_000
    h.commit_all()
    assert one(h.inbox(2), "berserk").d["clocks"]["first"]["ms"] == 30_000
    legal = room.game.legal_moves()
    h.send(1, "move", game=game_id, ply=1, move=legal[0])
    h.commit_all()
    h.send(2, "move", game=game_id, ply=2, move=room.game.legal_moves()[0])
    h.commit_all()
    h.advance(1_000)
    h.send(1, "move", game=game_id, ply=3, move=room.game.legal_moves()[0])
    h.commit_all()
    assert room.clock.time(Side.FIRST).main_ms == 29_000  # 1 s spent, no increment
    h.advance(1_000)
    h.send(2, "move", game=game_id, ply=4, move=room.game.legal_moves()[0])
    h.commit_all()
    assert room.clock.time(Side.SECOND).main_ms == 61_000  # 1 s spent, +2 s


def test_a_berserk_not_stored_changes_nothing() -> None:
    h = Harness(auto_commit=False)
    game_id = paired(h)
    h.commit_all()
    h.clear()
    h.send(2, "berserk", ack=7, game=game_id)
    h.fail()
    error = one(h.inbox(2), "error")
    assert error.d["code"] == ErrorCode.BERSERK_NOT_SAVED and error.a == 7
    room = room_of(h, game_id)
    assert room.clock.time(Side.SECOND).main_ms == 60_000 and not room.state.berserk[Side.SECOND]
    assert h.inbox(1) == []
    h.send(2, "berserk", ack=8, game=game_id)  # may try again
    h.commit_all()
    assert one(h.inbox(2), "ack").a == 8


@pytest.mark.parametrize("moved", [False, True], ids=["before-its-move", "after-its-move"])
def test_a_resumed_game_keeps_a_stored_berserk(moved: bool) -> None:
    """``restore_game(berserk=...)``: the berserked side's clock follows the berserk control
    again (its halved time when it has not moved, no increment after)."""
    h = Harness()
    alice, bob = player("alice", variant="wildcastle"), player("bob", variant="wildcastle")
    h.connect(1, alice)
    h.connect(2, bob)
    variant = get_variant("wildcastle")
    game = Game(variant, variant.start_fen)
    moves = []
    if moved:
        uci = game.legal_moves()[0]
        game.play(uci)
        moves.append(MoveRecord(1, uci, uci, 25_000, None, 5_000))
    h.run(
        h.hub.restore_game(
            "Gam3Id02", TERMS, (alice, bob), variant.start_fen, moves, h.now, berserk=(True, False)
        )
    )
    room = room_of(h, "Gam3Id02")
    assert room.state.berserk == [True, False]
    assert room.clock.time(Side.FIRST).main_ms == (25_000 if moved else 30_000)
    if not moved:
        h.send(1, "berserk", ack=1, game="Gam3Id02")  # once only, also after a restart
        assert one(h.inbox(1), "error").d["code"] == ErrorCode.NOT_BERSERKABLE
        h.send(1, "move", game="Gam3Id02", ply=1, move=room.game.legal_moves()[0])
    h.send(2, "move", game="Gam3Id02", ply=2, move=room.game.legal_moves()[0])
    h.advance(1_000)
    h.send(1, "move", game="Gam3Id02", ply=3, move=room.game.legal_moves()[0])
    before = 25_000 if moved else 30_000
    assert room.clock.time(Side.FIRST).main_ms == before - 1_000  # no increment
    h.send(2, "resign", game="Gam3Id02")
    end = [p.record for p in h.committed if isinstance(p.record, GameFinished)][-1]
    assert end.berserk == (True, False)

"""Chess-family rules in rooms: draw offers, draw claims, and the time-out material rule."""

import random

from hub_harness import Harness, one, only, play, player, start_game, wild_game

from server.hub.effects import GameFinished, Persist
from server.hub.lobby import GameTerms
from server.hub.persist_tokens import PersistTokens
from server.hub.room import GameRoom
from server.rules import Game, Side, get_variant
from server.rules.time_control import Fischer


def test_draw_offer_is_declined_by_playing_on_then_accepted() -> None:
    h = Harness()
    game_id, cycle = wild_game(h)
    play(h, game_id, cycle[:2])
    h.clear()
    h.send(1, "draw_offer", game=game_id, ack=1)
    assert one(h.inbox(1), "ack").a == 1
    assert one(h.inbox(2), "offer").d["action"] == "offer"
    play(h, game_id, cycle[2:3])  # the offerer's own move keeps the offer
    room = h.hub.room(game_id)
    assert room is not None and room.offers.pending_from("draw") == 0
    h.clear()
    play(h, game_id, cycle[3:4])  # the opponent plays on: declined
    cancel = one(h.inbox(1), "offer")
    assert cancel.d["action"] == "cancel" and room.offers.pending_from("draw") is None
    h.send(2, "draw_offer", game=game_id)
    h.clear()
    h.send(1, "draw_accept", game=game_id)
    end = one(h.inbox(2), "end")
    assert end.d["result"] == "1/2-1/2" and end.d["termination"] == "agreement"


def test_mutual_draw_offers_agree_and_decline_keeps_playing() -> None:
    h = Harness()
    game_id, cycle = wild_game(h)
    play(h, game_id, cycle[:2])
    h.send(1, "draw_offer", game=game_id)
    h.send(2, "draw_decline", game=game_id)
    assert only(h.inbox(1), "offer")[-1].d["action"] == "decline"
    h.send(1, "draw_offer", game=game_id)
    h.send(1, "draw_offer", game=game_id)
    assert one(h.inbox(1), "error").d["code"] == "offer_pending"
    h.send(2, "draw_offer", game=game_id)
    room = h.hub.room(game_id)
    assert room is not None and (room.result, room.termination) == ("1/2-1/2", "agreement")


def test_threefold_repetition_draw_is_claimed_by_the_player_to_move() -> None:
    h = Harness()
    game_id, cycle = wild_game(h)
    play(h, game_id, cycle)
    h.send(1, "claim_draw", game=game_id)
    assert one(h.inbox(1), "error").d["code"] == "no_draw_claim"
    play(h, game_id, cycle)
    h.send(2, "claim_draw", game=game_id)
    assert one(h.inbox(2), "error").d["code"] == "not_your_turn"
    h.send(1, "claim_draw", game=game_id, ack=4)
    room = h.hub.room(game_id)
    assert room is not None and (room.result, room.termination) == ("1/2-1/2", "repetition")


def test_the_server_says_when_a_draw_may_be_claimed() -> None:
    """``draw_claim`` on move events and snapshots: true exactly when ``claim_draw`` would be
    accepted from the side to move (here: the third occurrence of the position)."""
    h = Harness()
    game_id, cycle = wild_game(h)
    said = []
    for _ in range(2):
        for move in cycle:
            h.clear()
            play(h, game_id, [move])
            said.append(one(h.inbox(2), "move").d["draw_claim"])
    assert said == [False] * (2 * len(cycle) - 1) + [True]
    h.clear()
    h.send(2, "join", game=game_id)
    assert one(h.inbox(2), "game").d["draw_claim"] is True
    h.send(1, "claim_draw", game=game_id)
    room = h.hub.room(game_id)
    assert room is not None and room.termination == "repetition"
    h.clear()
    h.send(2, "join", game=game_id)
    assert one(h.inbox(2), "game").d["draw_claim"] is False  # over: nothing to claim


def quiet_line(game: Game, plies: int, rng: random.Random) -> list[str]:
    """``plies`` moves from ``game``'s position with no capture or pawn move (each adds one to
    the fifty-move count) and no position seen twice (so no repetition claim): found by a
    depth-first search in a random order; ``game`` is left after them."""
    line: list[str] = []

    def extend() -> bool:
        if len(line) == plies:
            return True
        moves = game.legal_moves()
        rng.shuffle(moves)
        before = game.position.halfmove
        for move in moves:
            game.play(move)
            quiet = game.position.halfmove == before + 1
            if quiet and game.repetitions() < 2 and game.outcome() is None:
                line.append(move)
                if extend():
                    return True
                line.pop()
            game.undo()
        return False

    assert extend(), "no quiet line"
    return line


def test_the_server_says_when_the_fifty_move_draw_may_be_claimed() -> None:
    """``draw_claim`` turns true on the hundredth quiet half-move (and not before), and the
    claim then ends the game by the fifty-move rule."""
    h = Harness()
    game_id = start_game(h, variant="wildcastle")
    room = h.hub.room(game_id)
    assert room is not None
    line = quiet_line(Game(room.variant, room.start_fen), 100, random.Random(1))
    said = []
    for move in line:
        h.clear()
        play(h, game_id, [move])
        said.append(one(h.inbox(2), "move").d["draw_claim"])
    assert said == [False] * 99 + [True]
    h.clear()
    h.send(2, "join", game=game_id)
    assert one(h.inbox(2), "game").d["draw_claim"] is True
    h.send(1, "claim_draw", game=game_id)
    assert (room.result, room.termination) == ("1/2-1/2", "fifty_moves")


def test_byoyomi_challenge_in_a_chess_variant_is_refused() -> None:
    h = Harness()
    h.connect(1, player("alice"))
    h.connect(2, player("bob"))
    byoyomi = {"kind": "byoyomi", "main_s": 60, "period_s": 10, "periods": 1}
    h.clear()
    h.send(1, "match", to="bob", variant="spartan", tc=byoyomi)
    assert one(h.inbox(1), "error").d["code"] == "byoyomi_unavailable"
    assert h.inbox(2) == [] and h.hub.challenge(1) is None


def flag_room(fen: str, flagger: int) -> GameRoom:
    """A Wild Castle room from ``fen``; both sides move once, then ``flagger`` runs out."""
    room = GameRoom(
        "g1",
        get_variant("wildcastle"),
        GameTerms("wildcastle", Fischer.from_seconds(15, 0), rated=True),
        (player("alice"), player("bob")),
        fen,
        PersistTokens(),
    )
    room.lifecycle.start(0)
    for ply, uci in enumerate(("d1d2", "e8e7"), start=1):
        side = Side.FIRST if ply == 1 else Side.SECOND
        room.moves.play(10 + side, side, ply, uci, ply * 100, 0, None)
        room.moves.persisted(ply * 100)
    if flagger == 1:
        room.moves.play(10, Side.FIRST, 3, "d2d3", 300, 0, None)
        room.moves.persisted(300)
    deadline = room.clock.deadline()
    assert deadline is not None and room.clock.running == flagger
    effects = room.lifecycle.on_time(deadline)
    finished = [e.record for e in effects if isinstance(e, Persist)]
    assert len(finished) == 1 and isinstance(finished[0], GameFinished)
    assert finished[0].server_decided and room.result is None  # announced once stored
    room.lifecycle.end_persisted(deadline + 5)
    return room


def test_time_out_against_a_lone_king_is_a_draw() -> None:
    room = flag_room("4k3/8/8/8/8/8/4P3/3QK3 w - - 0 1", flagger=0)
    assert (room.result, room.termination) == ("1/2-1/2", "time")


def test_time_out_against_mating_material_loses() -> None:
    room = flag_room("4k3/8/8/8/8/8/4P3/3QK3 w - - 0 1", flagger=1)
    assert (room.result, room.termination) == ("1-0", "time")

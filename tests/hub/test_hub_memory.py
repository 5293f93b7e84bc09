"""Game state is freed by reference counting: the server's garbage-collector policy (full
collections only on a timer, each freezing what survives it, see server.app.collector) relies
on a finished and evicted game leaving no reference cycles behind: a cycle frozen alive would
never be collected."""

from __future__ import annotations

import gc
import random

from hub_harness import Harness, player

from server.rules import Game, get_variant

TC = {"kind": "fischer", "base_s": 600, "inc_s": 0}


def cyclic_garbage() -> list[object]:
    """What a full collection finds unreachable (kept in gc.garbage to be inspected)."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    found = list(gc.garbage)
    gc.garbage.clear()
    gc.set_debug(0)
    return found


def play_games(h: Harness, count: int, rng: random.Random) -> list[str]:
    """Play ``count`` games to their end (on the board or by resignation); their ids."""
    game_ids = []
    for index in range(count):
        first, second = 10 + 2 * index, 11 + 2 * index
        h.connect(first, player(f"p{first}"))
        h.connect(second, player(f"p{second}"))
        h.send(first, "seek", colour="first", variant="minishogi", tc=TC, rated=False)
        h.send(second, "seek", colour="second", variant="minishogi", tc=TC, rated=False)
        game_id = h.hub.active_game(f"p{first}")
        assert game_id is not None
        game_ids.append(game_id)
        room = h.hub.room(game_id)
        assert room is not None
        for ply in range(1, 41):
            legal = room.game.legal_moves()
            if room.finished or not legal:
                break
            h.send(
                first if ply % 2 else second, "move", game=game_id, ply=ply, move=rng.choice(legal)
            )
        if not room.finished:
            h.send(first, "resign", game=game_id)
        h.send(second, "chat", game=game_id, text="gg")
        h.disconnect(first)
        h.disconnect(second)
    return game_ids


def test_finished_and_evicted_games_leave_no_cyclic_garbage(no_automatic_collection: None) -> None:
    h = Harness()
    game_ids = play_games(h, 20, random.Random(5))
    assert all(h.hub.room(game_id).finished for game_id in game_ids)  # type: ignore[union-attr]
    h.advance(24 * 3_600_000)  # past every eviction deadline
    h.tick()
    assert [h.hub.room(game_id) for game_id in game_ids] == [None] * 20
    h.inboxes.clear()
    h.committed.clear()
    h.published.clear()
    h.closed.clear()
    assert cyclic_garbage() == []


def test_a_game_keeps_no_move_lists_for_the_positions_it_has_passed() -> None:
    game = Game(get_variant("minishogi"))
    rng = random.Random(3)
    for _ in range(30):
        legal = game.legal_moves()
        if not legal:
            break
        game.play(rng.choice(legal))
    history = [game.position_at(ply) for ply in range(game.ply)]
    assert all(p._legal is None and p._from is None and p._pins is None for p in history)
    # Forgetting changes no answer: the history replays to the same moves.
    assert (
        game.position_at(0).legal_moves() == Game(get_variant("minishogi")).position.legal_moves()
    )

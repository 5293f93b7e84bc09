"""Stored games from creation to their end: a game created and read back, caller-chosen ids,
refused games and clock columns, a game stored already started, start, finish and abort and
the transitions refused.
"""

from __future__ import annotations

import pytest
from game_rows import BYOYOMI, MakeGame, MakePlayer, count_rows

from server.rules import MoveRecord
from server.rules.time_control import Byoyomi, Fischer, TimeControl
from server.store import GameRecord, GameStateError, Store, UnknownGameError, UnknownPlayerError
from server.store.records import control_columns, control_of_columns


async def test_create_and_get_game(store: Store, make_player: MakePlayer) -> None:
    alice = await make_player("alice")
    game_id = await store.create_game(
        variant="shoshogi",
        start_fen="start",
        time_control=BYOYOMI,
        first_name="alice",
        second_name="Guest42",
        first_player_id=alice,
    )
    assert len(game_id) == 8 and game_id.isalnum()
    game = await store.get_game(game_id)
    assert isinstance(game, GameRecord)
    assert (game.id, game.variant, game.start_fen) == (game_id, "shoshogi", "start")
    assert game.time_control == BYOYOMI
    assert game.speed == "classical"  # 600 s + 3 periods * 25 * 30 s = 2850 s
    assert (game.first_player_id, game.second_player_id) == (alice, None)
    assert (game.first_name, game.second_name) == ("alice", "Guest42")
    assert (game.status, game.result, game.termination) == ("created", None, None)
    assert not game.rated
    assert game.created_at.tzinfo is not None
    assert game.started_at is None and game.finished_at is None
    assert game.moves == ()
    assert await store.get_game("nosuch00") is None


async def test_caller_chosen_game_id(store: Store) -> None:
    kwargs = dict(
        variant="spartan",
        start_fen="x",
        time_control=Fischer(60_000),
        first_name="a",
        second_name="b",
    )
    assert await store.create_game(game_id="hub-1_A", **kwargs) == "hub-1_A"  # type: ignore[arg-type]
    with pytest.raises(GameStateError):
        await store.create_game(game_id="hub-1_A", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        await store.create_game(game_id="no spaces", **kwargs)  # type: ignore[arg-type]
    assert await count_rows(store, "games") == 1


async def test_game_with_unknown_player(store: Store) -> None:
    with pytest.raises(UnknownPlayerError):
        await store.create_game(
            variant="spartan",
            start_fen="x",
            time_control=Fischer(60_000),
            first_name="a",
            second_name="b",
            first_player_id=999,
        )
    assert await count_rows(store, "games") == 0


@pytest.mark.parametrize(
    "change",
    [
        {"variant": ""},
        {"first_name": "x" * 33},
        {"start_fen": ""},
        {"rated": True},  # guests cannot play rated games
    ],
)
async def test_bad_games_are_refused(store: Store, change: dict[str, object]) -> None:
    arguments: dict[str, object] = {
        "variant": "spartan",
        "start_fen": "x",
        "time_control": Fischer(60_000),
        "first_name": "a",
        "second_name": "b",
    }
    arguments.update(change)
    with pytest.raises(ValueError):
        await store.create_game(**arguments)  # type: ignore[arg-type]
    assert await count_rows(store, "games") == 0


@pytest.mark.parametrize(
    "columns",
    [
        ("fischer", 0, 0, 0, 0),  # no time at all
        ("fischer", 60_000, 0, 10_000, 1),  # byoyomi fields on a Fischer clock
        ("byoyomi", 60_000, 1_000, 10_000, 1),  # an increment on a byoyomi clock
        ("byoyomi", 60_000, 0, 0, 1),  # byoyomi without a period length
        ("byoyomi", 60_000, 0, 10_000, 0),  # byoyomi without periods
        ("hourglass", 60_000, 0, 0, 0),
        ("fischer", -1, 0, 0, 0),
    ],
)
def test_impossible_clock_columns_are_refused(columns: tuple[str, int, int, int, int]) -> None:
    with pytest.raises(ValueError):
        control_of_columns(*columns)


@pytest.mark.parametrize("control", [Fischer(60_000, 2_000), Byoyomi(0, 10_000, 3)])
def test_clock_columns_round_trip(control: TimeControl) -> None:
    columns = control_columns(control)
    assert control_of_columns(**columns) == control


async def test_a_game_can_be_stored_already_started_in_one_commit(store: Store) -> None:
    game_id = await store.create_game(
        variant="minishogi",
        start_fen="rbsgk/4p/5/P4/KGSBR[-] w 0 1",
        time_control=Fischer(60_000),
        first_name="a",
        second_name="b",
        started=True,
    )
    game = await store.get_game(game_id)
    assert game is not None and game.status == "started"
    assert game.started_at == game.created_at
    # stored with FSF's "[-]" (as games were before 2026-12): read back as the writer spells it
    assert game.start_fen == "rbsgk/4p/5/P4/KGSBR[] w 0 1"
    with pytest.raises(GameStateError):
        await store.start_game(game_id)
    await store.append_move(game_id, MoveRecord(1, "a1b2", "K-4d", 60_000, 0))
    assert await store.finish_game(game_id, "0-1", "resignation") is None


async def test_lifecycle(store: Store, make_game: MakeGame) -> None:
    game_id = await make_game(start=False)
    await store.start_game(game_id)
    started = await store.get_game(game_id)
    assert started is not None and started.status == "started" and started.started_at
    with pytest.raises(GameStateError):
        await store.start_game(game_id)
    assert await store.finish_game(game_id, "1-0", "checkmate", plies=31, final_fen="end") is None
    finished = await store.get_game(game_id)
    assert finished is not None
    assert (finished.status, finished.result, finished.termination) == (
        "finished",
        "1-0",
        "checkmate",
    )
    assert (finished.plies, finished.final_fen) == (31, "end")
    assert finished.finished_at is not None and finished.finished_at >= finished.created_at
    with pytest.raises(GameStateError, match="finished"):
        await store.finish_game(game_id, "0-1", "resignation")
    with pytest.raises(GameStateError):
        await store.abort_game(game_id)
    still = await store.get_game(game_id)
    assert still is not None and (still.result, still.termination) == ("1-0", "checkmate")


async def test_abort(store: Store, make_game: MakeGame) -> None:
    game_id = await make_game()
    await store.abort_game(game_id, "abandonment", plies=1)
    game = await store.get_game(game_id)
    assert game is not None
    assert (game.status, game.result, game.termination, game.plies) == (
        "aborted",
        None,
        "abandonment",
        1,
    )
    with pytest.raises(GameStateError):
        await store.finish_game(game_id, "1-0", "time")


async def test_unknown_game_transitions(store: Store) -> None:
    for action in (
        store.start_game("missing1"),
        store.finish_game("missing1", "1-0", "time"),
        store.abort_game("missing1"),
    ):
        with pytest.raises(UnknownGameError):
            await action


@pytest.mark.parametrize("result", ["1-1", "", "1/2", "white"])
async def test_bad_result_changes_nothing(store: Store, make_game: MakeGame, result: str) -> None:
    game_id = await make_game()
    with pytest.raises(ValueError):
        await store.finish_game(game_id, result, "checkmate")  # type: ignore[arg-type]
    game = await store.get_game(game_id)
    assert game is not None and game.status == "started"

"""A stored game's moves: round trip with clocks and times, duplicate and racing plies (one
writer wins each), malformed moves refused, moves retracted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from game_rows import BYOYOMI, MakeGame, count_rows, move

from server.rules import MoveRecord
from server.store import DuplicateMoveError, Store, UnknownGameError


async def test_moves_round_trip(store: Store, make_game: MakeGame) -> None:
    game_id = await make_game(time_control=BYOYOMI)
    at = datetime(2025, 5, 1, 12, 0, 0, 250_000, tzinfo=UTC)
    played = [
        MoveRecord(1, "e2e4", "e4", 600_000, 0, played_at=at),
        MoveRecord(2, "e7e5", "e5", 600_000, 0, played_at=at + timedelta(seconds=1)),
        MoveRecord(3, "g1f3", "Nf3", 0, 612_000, periods_left=2, played_at=at + timedelta(days=1)),
    ]
    for record in played:
        await store.append_move(game_id, record)
    game = await store.get_game(game_id)
    assert game is not None
    assert [
        (m.ply, m.uci, m.display, m.clock_ms, m.periods_left, m.spent_ms) for m in game.moves
    ] == [
        (1, "e2e4", "e4", 600_000, None, 0),
        (2, "e7e5", "e5", 600_000, None, 0),
        (3, "g1f3", "Nf3", 0, 2, 612_000),
    ]
    assert [m.played_at for m in game.moves] == [r.played_at for r in played]


async def test_a_move_without_a_time_is_stored_as_played_now(
    store: Store, make_game: MakeGame
) -> None:
    game_id = await make_game()
    before = datetime.now(UTC)
    await store.append_move(*move(game_id, 1))
    game = await store.get_game(game_id)
    assert game is not None and game.moves[0].played_at is not None
    assert before <= game.moves[0].played_at <= datetime.now(UTC)


async def test_duplicate_ply_is_refused(store: Store, make_game: MakeGame) -> None:
    game_id = await make_game()
    await store.append_move(*move(game_id, 1, "a1a2"))
    with pytest.raises(DuplicateMoveError) as raised:
        await store.append_move(*move(game_id, 1, "b1b2"))
    assert (raised.value.game_id, raised.value.ply) == (game_id, 1)
    game = await store.get_game(game_id)
    assert game is not None and [m.uci for m in game.moves] == ["a1a2"]


async def test_move_for_unknown_game(store: Store) -> None:
    with pytest.raises(UnknownGameError):
        await store.append_move(*move("missing1", 1))
    assert await count_rows(store, "game_moves") == 0


@pytest.mark.parametrize(
    "fields",
    [
        {"ply": 0},
        {"uci": ""},
        {"display": "x" * 65},
        {"clock_ms": -1},
        {"spent_ms": -5},
        {"periods_left": -1},
        {"game_id": "bad id"},
        {"played_at": datetime(2025, 1, 1)},
    ],
)
async def test_malformed_moves_are_refused(
    store: Store, make_game: MakeGame, fields: dict[str, object]
) -> None:
    game_id = await make_game()
    values: dict[str, object] = {
        "game_id": game_id,
        "ply": 1,
        "uci": "a1a2",
        "display": "a2",
        "clock_ms": 1,
        "spent_ms": 1,
    }
    values.update(fields)
    target = values.pop("game_id")
    with pytest.raises(ValueError):
        await store.append_move(target, MoveRecord(**values))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        await store.append_moves([(target, MoveRecord(**values))])  # type: ignore[arg-type]
    assert await count_rows(store, "game_moves") == 0


async def test_racing_writers_one_wins(
    store: Store, open_store: Callable[[], Store], make_game: MakeGame
) -> None:
    """Two stores (two pools) write the same plies at the same time: exactly one wins each."""
    game_id = await make_game()
    rival = open_store()
    for ply in range(1, 11):
        outcomes = await asyncio.gather(
            store.append_move(*move(game_id, ply, "a1a2")),
            rival.append_move(*move(game_id, ply, "b1b2")),
            return_exceptions=True,
        )
        assert sorted(type(o).__name__ for o in outcomes) == ["DuplicateMoveError", "NoneType"]
    game = await store.get_game(game_id)
    assert game is not None and [m.ply for m in game.moves] == list(range(1, 11))


async def test_retract_moves(store: Store, make_game: MakeGame) -> None:
    game_id = await make_game()
    other = await make_game()
    for ply in range(1, 6):
        await store.append_move(*move(game_id, ply))
        await store.append_move(*move(other, ply))
    assert await store.retract_moves(game_id, 4) == 2
    await store.append_move(*move(game_id, 4, "z9z8"))  # the ply is free again
    game = await store.get_game(game_id)
    assert game is not None and [(m.ply, m.uci) for m in game.moves][-2:] == [
        (3, "a1a2"),
        (4, "z9z8"),
    ]
    untouched = await store.get_game(other)
    assert untouched is not None and len(untouched.moves) == 5
    with pytest.raises(ValueError):
        await store.retract_moves(game_id, 0)

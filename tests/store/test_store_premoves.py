"""The ``premoves`` table (SQLite and PostgreSQL): set, replace, delete, read back, and what a
restore is given."""

from __future__ import annotations

import pytest

from server.cluster.restore import resumable_game
from server.hub.effects import PremovesSet
from server.rules import Side
from server.rules.time_control import Correspondence
from server.store import GameRecord, Store, UnknownGameError


async def test_set_replace_clear_and_restore(store: Store) -> None:
    game_id = await store.create_game(
        variant="minishogi",
        start_fen="rbsgk/4p/5/P4/KGSBR[] w - - 0 1",
        time_control=Correspondence(3),
        first_name="alice",
        second_name="bob",
        started=True,
    )
    assert await store.premoves_of(game_id) == []
    first = PremovesSet(game_id, Side.FIRST, 1, (("c5c4", "c1c2"), ("a5a2", "b2c3", "d5c4", "x")))
    second = PremovesSet(game_id, Side.SECOND, 2, (("b2c3", "d5c4"),))
    await store.set_premoves(first)
    await store.set_premoves(second)
    assert await store.premoves_of(game_id) == [first, second]
    replaced = PremovesSet(game_id, Side.FIRST, 3, (("a5a3", "b2b3"),))
    await store.set_premoves(replaced)
    assert await store.premoves_of(game_id) == [replaced, second]
    assert (await resumable_game(store, await _game(store, game_id))).premoves == (
        replaced,
        second,
    )
    await store.set_premoves(PremovesSet(game_id, Side.SECOND, 4, ()))
    assert await store.premoves_of(game_id) == [replaced]
    with pytest.raises(UnknownGameError):
        await store.set_premoves(PremovesSet("nosuchgame", Side.FIRST, 0, (("a", "b"),)))
    assert await store.premoves_of("nosuchgame") == []


async def _game(store: Store, game_id: str) -> GameRecord:
    game = await store.get_game(game_id)
    assert game is not None
    return game

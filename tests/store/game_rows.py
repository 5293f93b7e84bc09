"""Shortcuts of the store's game tests (test_store_game_*.py): the fixtures' callable types,
a move row, a count of a table's rows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy import func, select

from server.rules import MoveRecord
from server.rules.time_control import Byoyomi
from server.store import GameMove, Store
from server.store.schema import game_moves, games

MakeGame = Callable[..., Awaitable[str]]
MakePlayer = Callable[[str], Awaitable[int]]
BYOYOMI = Byoyomi(600_000, 30_000, 3)


def move(game_id: str, ply: int, uci: str = "a1a2", clock_ms: int = 60_000) -> GameMove:
    return game_id, MoveRecord(ply, uci, f"display-{uci}", clock_ms, spent_ms=1_000)


async def count_rows(store: Store, table_name: str) -> int:
    table = {"games": games, "game_moves": game_moves}[table_name]
    async with store.engine.connect() as connection:
        return int((await connection.execute(select(func.count()).select_from(table))).scalar_one())

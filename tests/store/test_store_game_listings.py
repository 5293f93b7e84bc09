"""The stored games' listings (``Store.list_games``): filters by player, name, variant, result
and status, partial names, move counts of running games, time windows, cursor pagination and
its refusals.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from game_rows import MakeGame, MakePlayer, move
from sqlalchemy import update

from server.store import Store
from server.store.queries import NAME_MATCHES
from server.store.schema import games


async def test_list_filters(store: Store, make_game: MakeGame, make_player: MakePlayer) -> None:
    alice, bob, carol = [await make_player(n) for n in ("alice", "bob", "carol")]
    ab = await make_game(
        first_name="alice", second_name="bob", first_player_id=alice, second_player_id=bob
    )
    ca = await make_game(
        first_name="carol",
        second_name="alice",
        first_player_id=carol,
        second_player_id=alice,
        variant="spartan",
    )
    bg = await make_game(first_name="bob", second_name="Guest7", first_player_id=bob)
    await store.finish_game(ab, "1-0", "checkmate")
    await store.finish_game(ca, "0-1", "time")
    await store.finish_game(bg, "1-0", "resignation")

    async def ids(**filters: object) -> list[str]:
        page = await store.list_games(**filters)  # type: ignore[arg-type]
        return [g.id for g in page.games]

    assert await ids() == [bg, ca, ab]  # newest first
    assert await ids(player_id=alice) == [ca, ab]
    assert await ids(player_id=bob) == [bg, ab]
    assert await ids(player_name="Guest7") == [bg]
    assert await ids(player_name="alice") == [ca, ab]
    assert await ids(player_name="ALICE") == [ca, ab]  # registered names: any case
    assert await ids(player_name="Alice", variant="spartan") == [ca]
    assert await ids(player_name="nobody") == []
    assert await ids(variant="spartan") == [ca]
    assert await ids(result="1-0") == [bg, ab]
    assert await ids(result="0-1", player_id=alice) == [ca]
    assert await ids(status="finished") == [bg, ca, ab]
    assert await ids(status="started") == []
    assert await ids(player_id=carol, variant="minishogi") == []
    # Part of a registered name, in any case; the computer (no account) by its name or part
    # of it; a guest's name only whole; LIKE's wildcards are plain characters here.
    cpu = await make_game(first_name="carol", second_name="Computer", first_player_id=carol)
    assert await ids(player_name="LIC") == [ca, ab]
    assert await ids(player_name="ar") == [cpu, ca]
    assert await ids(player_name="Computer") == [cpu]
    assert await ids(player_name="comp") == [cpu]
    assert await ids(player_name="uest") == []
    assert await ids(player_name="%") == [] and await ids(player_name="_") == []


async def test_a_partial_name_finds_the_best_matching_names_only(
    store: Store, make_game: MakeGame, make_player: MakePlayer
) -> None:
    """A name filter stands for at most NAME_MATCHES registered names, the whole name and
    the names beginning with it first: a one-letter filter stays one bounded query."""
    names = [f"zed{i:02}" for i in range(NAME_MATCHES + 5)] + ["xzed"]
    for name in names:
        pid = await make_player(name)
        await make_game(first_name=name, second_name="Guest1", first_player_id=pid)
    page = await store.list_games(player_name="zed", limit=100)
    found = {g.first_name for g in page.games}
    assert len(found) == NAME_MATCHES and "xzed" not in found  # beginnings before insides
    page = await store.list_games(player_name="xzed", limit=100)
    assert [g.first_name for g in page.games] == ["xzed"]


async def test_list_counts_the_moves_of_running_games(store: Store, make_game: MakeGame) -> None:
    running = await make_game()
    await store.append_moves([move(running, 1), move(running, 2, "a2a3")])
    fresh = await make_game()
    page = await store.list_games()
    assert {g.id: g.plies for g in page.games} == {running: 2, fresh: 0}


async def test_list_time_window(store: Store, make_game: MakeGame) -> None:
    old, middle, new = [await make_game() for _ in range(3)]
    now = datetime.now(UTC)
    async with store.engine.begin() as connection:
        for game_id, age in ((old, 10), (middle, 5), (new, 1)):
            await connection.execute(
                update(games)
                .where(games.c.id == game_id)
                .values(created_at=now - timedelta(days=age))
            )
    page = await store.list_games(since=now - timedelta(days=6))
    assert [g.id for g in page.games] == [new, middle]
    page = await store.list_games(until=now - timedelta(days=5))
    assert [g.id for g in page.games] == [old]  # until is exclusive
    page = await store.list_games(since=now - timedelta(days=11), until=now - timedelta(days=2))
    assert [g.id for g in page.games] == [middle, old]
    with pytest.raises(ValueError):
        await store.list_games(since=datetime(2025, 1, 1))  # naive


async def test_list_pagination(store: Store, make_game: MakeGame) -> None:
    created = [await make_game() for _ in range(7)]
    # Two games share a creation time: the id breaks the tie, so no page skips or repeats one.
    async with store.engine.begin() as connection:
        same = datetime.now(UTC)
        await connection.execute(
            update(games).where(games.c.id.in_(created[2:4])).values(created_at=same)
        )
    everything = [g.id for g in (await store.list_games(limit=100)).games]
    assert sorted(everything) == sorted(created)
    seen: list[str] = []
    cursor = None
    while True:
        page = await store.list_games(limit=3, cursor=cursor)
        assert len(page.games) <= 3
        seen.extend(g.id for g in page.games)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == everything
    last = await store.list_games(limit=7)
    assert last.next_cursor is None


@pytest.mark.parametrize("cursor", ["garbage", "", "Zm9vfGJhcg"])
async def test_bad_cursor(store: Store, cursor: str) -> None:
    with pytest.raises(ValueError, match="cursor"):
        await store.list_games(cursor=cursor)


@pytest.mark.parametrize("limit", [0, -1, 501])
async def test_bad_limit(store: Store, limit: int) -> None:
    with pytest.raises(ValueError):
        await store.list_games(limit=limit)

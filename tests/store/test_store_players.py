"""Players and login sessions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from server.hub.glicko2 import Rating
from server.store import NameTakenError, PlayerRating, Store, UnknownPlayerError
from server.store.schema import players, sessions


async def test_create_and_find_player(store: Store) -> None:
    before = datetime.now(UTC)
    created = await store.create_player("Magnus", "argon2-hash")
    assert created.name == "Magnus"
    assert created.password_hash == "argon2-hash"
    assert before <= created.created_at <= datetime.now(UTC)
    assert await store.player_by_name("Magnus") == created
    assert await store.player_by_name("magnus") == created  # case-insensitive lookup
    assert await store.player_by_id(created.id) == created
    assert await store.player_by_name("Hikaru") is None
    assert await store.player_by_id(created.id + 1) is None


async def test_names_are_unique_in_any_case(store: Store) -> None:
    first = await store.create_player("Magnus", "h1")
    with pytest.raises(NameTakenError):
        await store.create_player("magnus", "h2")
    with pytest.raises(NameTakenError):
        await store.create_player("Magnus", "h3")
    assert await store.player_by_name("MAGNUS") == first
    second = await store.create_player("Hikaru", "h4")
    assert second.id != first.id


@pytest.mark.parametrize("name", ["", " padded", "x" * 33, "İ" * 32])
async def test_bad_names_are_refused(store: Store, name: str) -> None:
    with pytest.raises(ValueError):
        await store.create_player(name, "hash")
    async with store.engine.connect() as connection:
        assert (await connection.execute(select(players))).all() == []


async def test_empty_password_hash_is_refused(store: Store) -> None:
    with pytest.raises(ValueError):
        await store.create_player("Magnus", "")


async def test_session_round_trip(store: Store) -> None:
    player = await store.create_player("Magnus", "h")
    token = await store.create_session(player.id)
    other = await store.create_session(player.id)
    assert token != other
    assert await store.session_player(token) == player
    assert await store.delete_session(token) is True
    assert await store.session_player(token) is None
    assert await store.delete_session(token) is False
    assert await store.session_player(other) == player
    assert await store.session_player("not-a-token") is None


async def test_resuming_a_session_reads_the_player_and_every_rating(store: Store) -> None:
    magnus = await store.create_player("Magnus", "h")
    hikaru = await store.create_player("Hikaru", "h")
    token, other = await store.create_session(magnus.id), await store.create_session(hikaru.id)
    assert await store.resume_session(token) == (magnus, [])  # no rating yet
    ratings = [
        PlayerRating(magnus.id, "minishogi", "rapid", Rating(1612.5, 80.25, 0.059), 7),
        PlayerRating(magnus.id, "minishogi", "blitz", Rating(1490.0, 120.0, 0.06), 3),
        PlayerRating(magnus.id, "chess", "blitz", Rating(1700.0, 60.0, 0.058), 12),
        PlayerRating(hikaru.id, "chess", "blitz", Rating(2000.0, 50.0, 0.06), 40),
    ]
    for rating in ratings:
        await store.set_rating(rating)
    # Each rating once, by variant then speed, as player_ratings reads them.
    assert await store.resume_session(token) == (magnus, await store.player_ratings(magnus.id))
    assert await store.resume_session(token) == (magnus, [ratings[2], ratings[1], ratings[0]])
    assert await store.resume_session(other) == (hikaru, [ratings[3]])
    assert await store.resume_session("not-a-token") is None
    # It refreshes the session's last use, and an ended session resumes nothing.
    long_ago = datetime.now(UTC) - timedelta(days=40)
    async with store.engine.begin() as connection:
        await connection.execute(update(sessions).values(last_seen=long_ago))
    assert await store.resume_session(token) is not None
    async with store.engine.connect() as connection:
        seen = dict(
            (await connection.execute(select(sessions.c.player_id, sessions.c.last_seen))).all()
        )
    assert seen[magnus.id] > datetime.now(UTC) - timedelta(minutes=1)
    assert seen[hikaru.id] == long_ago
    assert await store.delete_session(token) is True
    assert await store.resume_session(token) is None


async def test_tokens_are_stored_hashed(store: Store) -> None:
    player = await store.create_player("Magnus", "h")
    token = await store.create_session(player.id)
    async with store.engine.connect() as connection:
        stored = (await connection.execute(select(sessions.c.token_hash))).scalar_one()
    assert token not in stored
    assert len(stored) == 64


async def test_session_for_unknown_player(store: Store) -> None:
    with pytest.raises(UnknownPlayerError):
        await store.create_session(12345)


async def test_lookup_refreshes_last_seen_and_idle_sessions_expire(store: Store) -> None:
    player = await store.create_player("Magnus", "h")
    token = await store.create_session(player.id)
    long_ago = datetime.now(UTC) - timedelta(days=40)
    async with store.engine.begin() as connection:
        await connection.execute(update(sessions).values(last_seen=long_ago))
    # Without a limit the old session still works, and the lookup refreshes it.
    assert await store.session_player(token) == player
    async with store.engine.connect() as connection:
        seen = (await connection.execute(select(sessions.c.last_seen))).scalar_one()
    assert seen > datetime.now(UTC) - timedelta(minutes=1)
    async with store.engine.begin() as connection:
        await connection.execute(update(sessions).values(last_seen=long_ago))
    assert await store.session_player(token, max_idle=timedelta(days=41)) == player
    async with store.engine.begin() as connection:
        await connection.execute(update(sessions).values(last_seen=long_ago))
    assert await store.session_player(token, max_idle=timedelta(days=30)) is None
    async with store.engine.connect() as connection:
        assert (await connection.execute(select(sessions))).all() == []


async def test_logout_everywhere(store: Store, open_store: Callable[[], Store]) -> None:
    magnus = await store.create_player("Magnus", "h")
    hikaru = await store.create_player("Hikaru", "h")
    tokens = [await store.create_session(magnus.id) for _ in range(3)]
    kept = await store.create_session(hikaru.id)
    assert await store.delete_player_sessions(magnus.id) == 3
    other = open_store()
    for token in tokens:
        assert await other.session_player(token) is None
    assert await other.session_player(kept) == hikaru

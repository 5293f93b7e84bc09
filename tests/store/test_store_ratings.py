"""Ratings: Glicko-2 updates applied in the same transaction as a rated result."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from sqlalchemy import select
from sqlalchemy.exc import DBAPIError

from server.hub.glicko2 import Rating, rate_game
from server.rules.time_control import Fischer
from server.store import PlayerRating, Store, UnknownPlayerError
from server.store.schema import ratings

MakeGame = Callable[..., Awaitable[str]]
MakePlayer = Callable[[str], Awaitable[int]]


def close(actual: Rating, expected: Rating) -> bool:
    """Equal up to float rounding (the database may round-trip doubles)."""
    return (actual.rating, actual.deviation, actual.volatility) == pytest.approx(
        (expected.rating, expected.deviation, expected.volatility), rel=1e-12
    )


async def rated_game(make_game: MakeGame, first: int, second: int, **extra: object) -> str:
    return await make_game(first_player_id=first, second_player_id=second, rated=True, **extra)


async def test_new_players_have_default_ratings(store: Store, make_player: MakePlayer) -> None:
    alice = await make_player("alice")
    rating = await store.get_rating(alice, "minishogi", "blitz")
    assert rating == PlayerRating(alice, "minishogi", "blitz", Rating(), 0)
    assert rating.rating.provisional
    assert await store.player_ratings(alice) == []  # defaults are not stored


async def test_rated_win_updates_both_ratings(
    store: Store, make_game: MakeGame, make_player: MakePlayer
) -> None:
    alice, bob = await make_player("alice"), await make_player("bob")
    game_id = await rated_game(make_game, alice, bob)
    change = await store.finish_game(game_id, "1-0", "checkmate")
    expected_first, expected_second = rate_game(Rating(), Rating(), 1.0)
    assert change is not None
    assert (change.first_before, change.second_before) == (Rating(), Rating())
    assert close(change.first_after, expected_first)
    assert close(change.second_after, expected_second)
    stored_alice = await store.get_rating(alice, "minishogi", "blitz")
    stored_bob = await store.get_rating(bob, "minishogi", "blitz")
    assert close(stored_alice.rating, expected_first)
    assert close(stored_bob.rating, expected_second)
    assert (stored_alice.games, stored_bob.games) == (1, 1)
    game = await store.get_game(game_id)
    assert game is not None
    assert (game.first_rating_before, game.first_rating_after) == (
        1500,
        round(expected_first.rating),
    )
    assert (game.second_rating_before, game.second_rating_after) == (
        1500,
        round(expected_second.rating),
    )
    # Another pool (other speed) is untouched.
    assert (await store.get_rating(alice, "minishogi", "rapid")).games == 0


async def test_ratings_chain_across_games(
    store: Store, make_game: MakeGame, make_player: MakePlayer
) -> None:
    alice, bob = await make_player("alice"), await make_player("bob")
    first = await rated_game(make_game, alice, bob)
    await store.finish_game(first, "1-0", "checkmate")
    second = await rated_game(make_game, bob, alice)  # colours swapped
    change = await store.finish_game(second, "1/2-1/2", "repetition")
    a1, b1 = rate_game(Rating(), Rating(), 1.0)
    b2, a2 = rate_game(b1, a1, 0.5)
    assert change is not None
    assert close(change.first_before, b1) and close(change.second_before, a1)
    assert close(change.first_after, b2) and close(change.second_after, a2)
    assert close((await store.get_rating(alice, "minishogi", "blitz")).rating, a2)
    stored_bob = await store.get_rating(bob, "minishogi", "blitz")
    assert close(stored_bob.rating, b2) and stored_bob.games == 2


async def test_unrated_and_guest_games_leave_ratings(
    store: Store, make_game: MakeGame, make_player: MakePlayer
) -> None:
    alice, bob = await make_player("alice"), await make_player("bob")
    casual = await make_game(first_player_id=alice, second_player_id=bob)
    assert await store.finish_game(casual, "1-0", "checkmate") is None
    guest = await make_game(first_player_id=alice)
    assert await store.finish_game(guest, "0-1", "time") is None
    rated = await rated_game(make_game, alice, bob)
    await store.abort_game(rated)
    async with store.engine.connect() as connection:
        assert (await connection.execute(select(ratings))).all() == []
    game = await store.get_game(casual)
    assert game is not None and game.first_rating_after is None


async def test_rating_failure_rolls_back_the_result(
    store: Store, make_game: MakeGame, make_player: MakePlayer, backend: str
) -> None:
    """If the rating update fails, the result is not stored either: one transaction."""
    alice, bob = await make_player("alice"), await make_player("bob")
    game_id = await rated_game(make_game, alice, bob)
    async with store.engine.begin() as connection:
        if backend == "sqlite":
            await connection.exec_driver_sql(
                "CREATE TRIGGER ratings_frozen BEFORE UPDATE ON ratings "
                "BEGIN SELECT RAISE(ABORT, 'ratings are frozen'); END"
            )
        else:
            await connection.exec_driver_sql(
                "CREATE FUNCTION ratings_frozen() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'ratings are frozen'; END $$"
            )
            await connection.exec_driver_sql(
                "CREATE TRIGGER ratings_frozen BEFORE UPDATE ON ratings "
                "FOR EACH ROW EXECUTE FUNCTION ratings_frozen()"
            )
    with pytest.raises(DBAPIError, match="ratings are frozen"):
        await store.finish_game(game_id, "1-0", "checkmate")
    game = await store.get_game(game_id)
    assert game is not None
    assert (game.status, game.result, game.finished_at) == ("started", None, None)
    async with store.engine.connect() as connection:
        assert (
            await connection.execute(select(ratings))
        ).all() == []  # default rows rolled back too


async def test_concurrent_finishes_sharing_a_player(
    store: Store, open_store: Callable[[], Store], make_game: MakeGame, make_player: MakePlayer
) -> None:
    """Two games of the same player end at once (two pools): no update is lost.

    Whatever order the database serialises them in, the player's final rating
    must be that of applying both games one after the other.
    """
    rival = open_store()
    fresh = Rating()
    # alice beats bob (alice first) in one game and carol (alice second) in the other.
    bob_game_first = rate_game(fresh, rate_game(fresh, fresh, 1.0)[0], 0.0)[1]
    carol_game_first = rate_game(rate_game(fresh, fresh, 0.0)[1], fresh, 1.0)[0]
    alice_either_order = (bob_game_first, carol_game_first)
    one_game_only = rate_game(fresh, fresh, 1.0)[0]
    assert not any(close(one_game_only, expected) for expected in alice_either_order)
    for round_ in range(5):
        alice, bob, carol = [await make_player(f"{n}{round_}") for n in ("alice", "bob", "carol")]
        for player in (alice, bob, carol):  # existing rows: only row locks can serialise
            await store.set_rating(PlayerRating(player, "minishogi", "blitz", fresh, 0))
        with_bob = await rated_game(make_game, alice, bob)
        with_carol = await rated_game(make_game, carol, alice)
        await asyncio.gather(
            store.finish_game(with_bob, "1-0", "checkmate"),
            rival.finish_game(with_carol, "0-1", "resignation"),
        )
        final = await store.get_rating(alice, "minishogi", "blitz")
        assert final.games == 2
        assert any(close(final.rating, expected) for expected in alice_either_order)


async def test_pools_follow_the_time_control(
    store: Store, make_game: MakeGame, make_player: MakePlayer
) -> None:
    alice, bob = await make_player("alice"), await make_player("bob")
    bullet = await rated_game(make_game, alice, bob, time_control=Fischer(60_000))
    await store.finish_game(bullet, "0-1", "time")
    spartan = await rated_game(
        make_game, alice, bob, variant="spartan", time_control=Fischer(900_000)
    )
    await store.finish_game(spartan, "1-0", "checkmate")
    pools = [(r.variant, r.speed, r.games) for r in await store.player_ratings(alice)]
    assert pools == [("minishogi", "bullet", 1), ("spartan", "rapid", 1)]
    found = await store.get_ratings([alice, bob, 999], "minishogi", "bullet")
    assert found[alice].rating.rating < 1500 < found[bob].rating.rating
    assert found[999] == PlayerRating(999, "minishogi", "bullet", Rating(), 0)


async def test_set_rating(store: Store, make_player: MakePlayer) -> None:
    alice = await make_player("alice")
    record = PlayerRating(alice, "wildcastle", "classical", Rating(1834.5, 61.2, 0.059), 40)
    await store.set_rating(record)
    assert await store.get_rating(alice, "wildcastle", "classical") == record
    corrected = PlayerRating(alice, "wildcastle", "classical", Rating(1700, 80, 0.06), 41)
    await store.set_rating(corrected)
    assert await store.player_ratings(alice) == [corrected]
    with pytest.raises(UnknownPlayerError):
        await store.set_rating(PlayerRating(alice + 1, "wildcastle", "blitz", Rating(), 0))
    with pytest.raises(ValueError):
        await store.set_rating(PlayerRating(alice, "wildcastle", "hyperbullet", Rating(), 0))  # type: ignore[arg-type]


async def test_rated_games_need_two_registered_players(
    store: Store, make_game: MakeGame, make_player: MakePlayer
) -> None:
    alice = await make_player("alice")
    with pytest.raises(ValueError):
        await make_game(first_player_id=alice, rated=True)
    with pytest.raises(ValueError):
        await make_game(first_player_id=alice, second_player_id=alice, rated=True)

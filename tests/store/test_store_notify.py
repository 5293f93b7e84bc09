"""The store's notification part: running games by turn, e-mail settings, durable mail claims
(server/store/notify.py), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest

from server.rules import MoveRecord
from server.rules.time_control import Correspondence
from server.store import Store
from server.store.errors import UnknownPlayerError

MakeGame = Callable[..., Awaitable[str]]
MakePlayer = Callable[[str], Awaitable[int]]
HOUR = timedelta(hours=1)


async def test_running_games_say_whose_turn(
    store: Store, make_player: MakePlayer, make_game: MakeGame
) -> None:
    alice, bob = await make_player("alice"), await make_player("bob")
    corr = await make_game(
        first_player_id=alice, second_player_id=bob, time_control=Correspondence(3)
    )
    other = await make_game(first_player_id=bob, second_player_id=alice)
    over = await make_game(first_player_id=alice, second_player_id=bob)
    await store.finish_game(over, "1-0", "resignation")
    await store.append_move(corr, MoveRecord(1, "a1b2", "K-4d", 0, 0))

    mine = {game.id: game for game in await store.running_games(alice)}
    assert set(mine) == {corr, other}
    assert (mine[corr].index, mine[corr].plies, mine[corr].your_turn) == (0, 1, False)
    assert mine[corr].control == Correspondence(3) and mine[corr].opponent == "bob"
    assert (mine[other].index, mine[other].plies, mine[other].your_turn) == (1, 0, False)
    theirs = {game.id: game.your_turn for game in await store.running_games(bob)}
    assert theirs == {corr: True, other: True}


async def test_settings_and_claims(
    store: Store, make_player: MakePlayer, make_game: MakeGame
) -> None:
    alice, bob = await make_player("alice"), await make_player("bob")
    game = await make_game(first_player_id=alice, second_player_id=bob)
    game2 = await make_game(first_player_id=alice, second_player_id=bob)
    now = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
    claim = store.claim_mail

    settings = await store.mail_settings(alice)
    assert (settings.email, settings.opt_in) == (None, False)
    await store.set_mail_settings(alice, email="alice@example.org", opt_in=None)
    assert await claim(alice, game, window=HOUR, daily_cap=5, now=now) is None  # not opted in
    settings = await store.set_mail_settings(alice, email=None, opt_in=True)
    assert (settings.email, settings.opt_in) == ("alice@example.org", True)

    assert await claim(alice, game, window=HOUR, daily_cap=5, now=now) == "alice@example.org"
    later = now + timedelta(minutes=59)
    assert await claim(alice, game, window=HOUR, daily_cap=5, now=later) is None
    assert await claim(alice, game2, window=HOUR, daily_cap=5, now=later) == "alice@example.org"
    assert await claim(alice, game, window=timedelta(0), daily_cap=5, now=later)  # an end
    assert await claim(alice, game, window=HOUR, daily_cap=5, now=later + HOUR)
    # the daily cap: 4 mails on this day so far; another account is not held back by it
    assert await claim(alice, game2, window=HOUR, daily_cap=4, now=later + HOUR) is None
    await store.set_mail_settings(bob, email="bob@example.org", opt_in=True)
    assert await claim(bob, game2, window=HOUR, daily_cap=4, now=later + HOUR) == "bob@example.org"
    next_day = now + timedelta(days=1)
    assert await claim(alice, game2, window=HOUR, daily_cap=1, now=next_day)
    assert await claim(alice, game, window=HOUR, daily_cap=1, now=next_day) is None

    settings = await store.set_mail_settings(alice, email=None, opt_in=None, forget=True)
    assert (settings.email, settings.opt_in) == (None, False)
    carol = await make_player("carol")
    assert await claim(carol, game, window=HOUR, daily_cap=5, now=now) is None  # no row at all
    with pytest.raises(UnknownPlayerError):
        await store.set_mail_settings(999_999, email="x@example.org", opt_in=True)


async def test_a_turn_within_the_hour_is_due_at_its_end(
    store: Store, make_player: MakePlayer, make_game: MakeGame
) -> None:
    alice, bob = await make_player("alice"), await make_player("bob")
    game = await make_game(first_player_id=alice, second_player_id=bob)
    await store.set_mail_settings(alice, email="alice@example.org", opt_in=True)
    await store.set_mail_settings(bob, email="bob@example.org", opt_in=False)
    now = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
    claim = store.claim_mail
    assert await claim(alice, game, window=HOUR, daily_cap=5, now=now, defer=True)
    later = now + timedelta(minutes=10)
    assert await claim(alice, game, window=HOUR, daily_cap=5, now=later, defer=True) is None
    assert await claim(bob, game, window=HOUR, daily_cap=5, now=later, defer=True) is None
    assert await store.take_due_mails(now + timedelta(minutes=59)) == []
    due = await store.take_due_mails(now + HOUR)
    assert [(d.player_id, d.game_id, d.index, d.opponent, d.your_turn) for d in due] == [
        (alice, game, 0, "bob", True)
    ]
    assert await store.take_due_mails(now + 2 * HOUR) == []  # taken once
    assert await claim(alice, game, window=HOUR, daily_cap=5, now=now + HOUR)

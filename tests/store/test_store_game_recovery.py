"""What a restart, a takeover or a sweep reads of the stored games: the unfinished games with
their moves and clocks, with their players and bots; the room versions kept for one
resumption; correspondence deadlines; the correspondence games left cold at start-up.
"""

from __future__ import annotations

from datetime import UTC, datetime

from game_rows import BYOYOMI, MakeGame, MakePlayer, move

from server.cluster.restore import resumable_game
from server.rules import MoveRecord
from server.rules.time_control import Correspondence, Fischer, TimeControl, Unlimited
from server.store import Store


async def test_load_unfinished_games(store: Store, make_game: MakeGame) -> None:
    waiting = await make_game(start=False)
    fresh = await make_game()
    running = await make_game(time_control=BYOYOMI)
    done = await make_game()
    aborted = await make_game()
    await store.append_move(*move(done, 1))
    await store.finish_game(done, "1/2-1/2", "agreement")
    await store.abort_game(aborted)
    for ply, clock, periods in ((1, 590_000, 3), (2, 580_000, 3), (3, 0, 2)):
        await store.append_move(
            running, MoveRecord(ply, f"m{ply}", f"M{ply}", clock, 10_000, periods_left=periods)
        )

    unfinished = await store.load_unfinished_games()
    assert [g.id for g in unfinished] == [waiting, fresh, running]
    by_id = {g.id: g for g in unfinished}
    assert by_id[waiting].status == "created" and by_id[waiting].started_at is None
    assert by_id[fresh].moves == () and by_id[fresh].started_at is not None
    game = by_id[running]
    assert [m.ply for m in game.moves] == [1, 2, 3]
    # What a restore resumes the clocks from: each stored move's clock and periods.
    assert [(m.clock_ms, m.periods_left) for m in game.moves] == [
        (590_000, 3),
        (580_000, 3),
        (0, 2),
    ]
    assert all(m.played_at is not None for m in game.moves)


async def test_the_unfinished_games_and_their_players_in_one_light_read(
    store: Store, make_game: MakeGame, make_player: MakePlayer
) -> None:
    """What the cluster's sweep lists and a login asks (``server.cluster.ownership``): the
    unfinished games with their registered players; a player's own, newest first."""
    alice, bob = await make_player("alice"), await make_player("bob")
    waiting = await make_game(start=False, first_player_id=alice)
    older = await make_game(first_player_id=alice, second_player_id=bob)
    newer = await make_game(second_player_id=alice)
    guests = await make_game()
    done = await make_game(first_player_id=alice, second_player_id=bob)
    aborted = await make_game(first_player_id=bob)
    # A correspondence game with a guest is listed for the sweep, but not as a player's
    # real-time game; one between two registered players (a bot or not) is not listed.
    corr = await make_game(first_player_id=alice, time_control=Correspondence(3))
    robot = await make_player("robot")
    assert await store.make_bot(robot)
    await make_game(first_player_id=robot, second_player_id=bob, time_control=Correspondence(3))
    await make_game(first_player_id=alice, second_player_id=bob, time_control=Correspondence(3))
    await store.append_move(*move(done, 1))
    await store.finish_game(done, "1/2-1/2", "agreement")
    await store.abort_game(aborted)

    listed = await store.unfinished_games()
    assert sorted(listed) == sorted(
        [
            (waiting, alice, None, False),
            (older, alice, bob, False),
            (newer, None, alice, False),
            (guests, None, None, False),
            (corr, alice, None, True),
        ]
    )
    assert all(game.id == game[0] for game in listed)
    assert await store.unfinished_games_of(alice) == [newer, older, waiting]
    assert await store.unfinished_games_of(alice, limit=2) == [newer, older]
    assert await store.unfinished_games_of(bob) == [older]
    assert await store.unfinished_games_of(alice + bob + 1000) == []


async def test_a_resumed_game_knows_its_bot_from_the_query_that_loads_it(
    store: Store, make_game: MakeGame, make_player: MakePlayer
) -> None:
    """Restart recovery (``load_unfinished_games``) and a takeover (``get_game``) read each
    player's bot flag with the game, so the restored room marks the bot (docs/bots.md)."""
    human, robo = await make_player("human"), await make_player("robo")
    assert await store.make_bot(robo)
    game_id = await make_game(
        first_name="human", second_name="robo", first_player_id=human, second_player_id=robo
    )
    (unfinished,) = [g for g in await store.load_unfinished_games() if g.id == game_id]
    taken = await store.get_game(game_id)
    assert taken is not None
    for record in (unfinished, taken):
        assert (record.first_bot, record.second_bot) == (False, True)
        first, second = (await resumable_game(store, record)).players
        assert not first.bot and second.bot and second.name == "robo"


async def test_room_versions_are_kept_for_one_resumption(store: Store, make_game: MakeGame) -> None:
    running, finished = await make_game(), await make_game()
    await store.finish_game(finished, "1-0", "resignation")
    assert await store.take_room_version(running) is None  # nothing kept: a crash
    await store.save_room_versions({running: 41, finished: 7, "unknown1": 3})
    assert await store.take_room_version(finished) is None  # over: not kept
    assert await store.take_room_version(running) == 41
    assert await store.take_room_version(running) is None  # taken: valid once
    await store.save_room_versions({})


async def test_correspondence_deadlines_are_stored_moved_later_and_read_when_due(
    store: Store,
) -> None:
    """A correspondence game's deadline is its creation + the allowance; ``postpone_deadline``
    only moves it later; ``due_correspondence`` lists the running games due, earliest first,
    never an unlimited, real-time or ended game."""
    created = datetime(2026, 12, 1, tzinfo=UTC)
    at = int(created.timestamp() * 1000)

    async def game(control: TimeControl) -> str:
        return await store.create_game(
            variant="minishogi", start_fen="rbsgk/4p/5/P4/KGSBR[-] w 0 1", time_control=control,
            first_name="a", second_name="b", started=True, created_at=created,
        )  # fmt: skip

    one_day, three_days = await game(Correspondence(1)), await game(Correspondence(3))
    await game(Unlimited())
    await game(Fischer(60_000))
    day = 86_400_000
    assert await store.due_correspondence(at + day - 1) == []
    assert await store.due_correspondence(at + 3 * day) == [one_day, three_days]
    assert await store.due_correspondence(at + 3 * day, limit=1) == [one_day]
    await store.postpone_deadline(one_day, at + 5 * day)
    await store.postpone_deadline(one_day, at + 4 * day)  # earlier: kept at 5 days
    assert await store.due_correspondence(at + 5 * day - 1) == [three_days]
    await store.finish_game(three_days, "1-0", "time")
    await store.postpone_deadline(three_days, at + 9 * day)  # over: left alone
    assert await store.due_correspondence(at + 30 * day) == [one_day]


async def test_the_start_up_leaves_registered_players_correspondence_games_cold(
    store: Store, make_player: MakePlayer, make_game: MakeGame
) -> None:
    """``load_unfinished_games(correspondence=False)``: the real-time games, and the
    correspondence games of a guest or a bot account; not those between two registered
    players (docs/correspondence.md "Memory")."""
    alice, bob, robot = [await make_player(name) for name in ("alice", "bobby", "robot")]
    assert await store.make_bot(robot)
    daily = Correspondence(1)
    blitz = await make_game(first_player_id=alice, second_player_id=bob)
    cold = await make_game(first_player_id=alice, second_player_id=bob, time_control=daily)
    guest = await make_game(first_player_id=alice, time_control=daily)
    bot = await make_game(first_player_id=robot, second_player_id=bob, time_control=daily)
    loaded = {game.id for game in await store.load_unfinished_games(correspondence=False)}
    assert loaded == {blitz, guest, bot}
    everything = {game.id for game in await store.load_unfinished_games()}
    assert everything == {blitz, cold, guest, bot}

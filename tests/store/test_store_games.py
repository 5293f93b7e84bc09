"""Games and moves: lifecycle, duplicate and racing plies, recovery, listings."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from server.cluster.restore import resumable_game
from server.rules import MoveRecord
from server.rules.time_control import Byoyomi, Correspondence, Fischer, TimeControl, Unlimited
from server.store import (
    DuplicateMoveError,
    GameMove,
    GameRecord,
    GameStateError,
    Store,
    UnknownGameError,
    UnknownPlayerError,
)
from server.store.queries import NAME_MATCHES
from server.store.records import control_columns, control_of_columns
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

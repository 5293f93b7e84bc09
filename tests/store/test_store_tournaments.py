"""Stored tournaments on both backends: created, events appended in order, a racing append
refused, the same standings after a restart (a new store on the same database), deadlines."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from support import poll

from server.hub.tournament.standings import standings
from server.hub.tournament.state import TournamentState, replay
from server.hub.tournament.swiss import pair_round
from server.hub.tournament.values import (
    Bye,
    Ended,
    Event,
    Finished,
    Joined,
    Paired,
    Paused,
    Resumed,
    Started,
    TournamentGame,
    TournamentSettings,
    Withdrew,
)
from server.rules.record import ResultCode
from server.rules.time_control import Byoyomi, Fischer
from server.store import Store, TournamentConflictError, UnknownTournamentError
from server.store.tournament_codec import event_json
from server.store.tournaments import each_unfinished_id, ms_datetime

NOW = datetime(2026, 12, 7, 1, 0, tzinfo=UTC)
START_MS = int(NOW.timestamp() * 1000)


def arena(start_ms: int | None = START_MS, **kw: object) -> TournamentSettings:
    return TournamentSettings(
        "Hourly Minishogi", "arena", "minishogi", Fischer(180_000, 0), start_at_ms=start_ms,
        duration_ms=3_600_000, **kw,  # type: ignore[arg-type]
    )


class Mirror:
    """A tournament as its director keeps it: the running state, and the next seq to append."""

    def __init__(self, store: Store, tournament_id: str) -> None:
        self.store = store
        self.id = tournament_id
        self.state = TournamentState()
        self.seq = 0

    async def add(self, *events: Event) -> None:
        self.seq = await self.store.append_tournament_events(self.id, self.seq, events)
        for event in events:
            self.state.apply(event)


def game(white: str, black: str, result: ResultCode, plies: int = 40, **berserk: bool) -> TournamentGame:
    return TournamentGame(white, black, result, plies, **berserk)


async def test_an_arena_is_the_same_after_a_restart(store: Store, open_store: Callable[[], Store]) -> None:
    settings = arena()
    tid = await store.create_tournament(settings, created_by="alice", now=NOW)
    info = (await store.load_tournament(tid)).info
    assert (info.settings, info.created_by, info.status, info.owner) == (settings, "alice", "created", None)
    assert info.created_at == NOW and info.next_deadline_at == ms_datetime(START_MS)
    t = Mirror(store, tid)
    for n, rating in enumerate((1500, 1600, 1700, 1800)):
        await t.add(Joined(f"p{n}", f"P{n}", rating, START_MS - 100 + n))
    await t.add(Started(START_MS))
    assert (await store.load_tournament(tid)).info.status == "started"
    at = START_MS
    # Three waves: p0 wins twice (on fire), berserks and wins a third (+1), p3 pauses, p2 withdraws.
    waves: list[list[tuple[str, str, ResultCode, dict[str, bool]]]] = [
        [("p0", "p1", "1-0", {}), ("p2", "p3", "1/2-1/2", {})],
        [("p3", "p0", "0-1", {}), ("p1", "p2", "1-0", {})],
        [("p0", "p2", "1-0", {"white_berserk": True}), ("p1", "p3", "0-1", {"black_berserk": True})],
    ]
    for wave, results in enumerate(waves, start=1):
        at += 60_000
        await t.add(*(Paired(f"w{wave}g{i}", wave, w, b, at) for i, (w, b, _, _) in enumerate(results)))
        for i, (w, b, result, berserk) in enumerate(results):
            await t.add(Finished(f"w{wave}g{i}", game(w, b, result, **berserk), at + 30_000 + i))
    await t.add(Paused("p3", at + 40_000), Resumed("p3", at + 41_000), Paused("p3", at + 42_000))
    await t.add(Withdrew("p2", at + 43_000))
    await t.add(Ended(START_MS + 3_600_000))
    expected = standings(settings, t.state)
    assert expected[0].player == "p0" and expected[0].fire and expected[0].sheet == (2, 2, 5)

    # A restart: a new store (its own engine and pool) on the same database.
    again = await open_store().load_tournament(tid)
    assert again.settings == settings and again.info.status == "finished"
    assert again.next_seq == t.seq == len(again.events)
    assert replay(again.events) == t.state
    assert standings(again.settings, replay(again.events)) == expected


async def test_a_swiss_is_the_same_after_a_restart(store: Store, open_store: Callable[[], Store]) -> None:
    settings = TournamentSettings("Weekly Dai Shogi", "swiss", "daishogi", Byoyomi(600_000, 30_000, 1),
                                  start_at_ms=START_MS, rounds=3)
    tid = await store.create_tournament(settings, created_by=None, now=NOW, owner="hub-a")
    t = Mirror(store, tid)
    await t.add(*(Joined(f"p{n}", f"Player {n}", 1400 + 50 * n, START_MS - 10) for n in range(7)))
    await t.add(Started(START_MS))
    for r in range(1, 4):
        pairing = pair_round(t.state, settings.rounds or 0)
        assert pairing is not None
        paired = [Paired(f"r{r}b{i}", r, w, b, START_MS + r) for i, (w, b) in enumerate(pairing.games)]
        byes = [Bye(pairing.bye, r, 1.0, START_MS + r)] if pairing.bye else []
        await t.add(*paired, *byes)
        for i, p in enumerate(paired):  # the stronger (higher n) wins; board 2 draws
            result: ResultCode = "1/2-1/2" if i == 1 else "1-0" if p.white > p.black else "0-1"
            await t.add(Finished(p.game_id, game(p.white, p.black, result), START_MS + r + 1))
        if r == 2:
            await t.add(Withdrew("p0", START_MS + r + 2))
    await t.add(Ended(START_MS + 10))
    again = await open_store().load_tournament(tid)
    assert again.info.owner == "hub-a" and again.info.created_by is None
    assert replay(again.events) == t.state
    assert standings(settings, replay(again.events)) == standings(settings, t.state)


async def test_a_racing_append_is_refused(store: Store, open_store: Callable[[], Store]) -> None:
    tid = await store.create_tournament(arena(), created_by="alice", now=NOW)
    assert await store.append_tournament_event(tid, 0, Joined("a", "A", 1500, 1)) == 1
    other = open_store()
    # Two writers that both saw one event append at once: exactly one is stored.
    outcomes = await asyncio.gather(
        store.append_tournament_event(tid, 1, Joined("b", "B", 1500, 2)),
        other.append_tournament_events(tid, 1, [Joined("c", "C", 1500, 3), Joined("d", "D", 1500, 4)]),
        return_exceptions=True,
    )
    refused = [o for o in outcomes if isinstance(o, TournamentConflictError)]
    assert len(refused) == 1 and refused[0].expected == 1, outcomes
    won = (await store.load_tournament(tid)).events[1:]
    assert won in ((Joined("b", "B", 1500, 2),), (Joined("c", "C", 1500, 3), Joined("d", "D", 1500, 4)))
    stored = 1 + len(won)
    # A writer behind (the loser, not reloaded) or ahead of the stored events changes nothing.
    for seq in (0, 1, stored + 1):
        with pytest.raises(TournamentConflictError):
            await other.append_tournament_event(tid, seq, Withdrew("a", 9))
    assert len((await store.load_tournament(tid)).events) == stored
    assert await other.append_tournament_event(tid, stored, Withdrew("a", 9)) == stored + 1


async def test_bad_calls_change_nothing(store: Store) -> None:
    with pytest.raises(UnknownTournamentError):
        await store.append_tournament_event("nope", 0, Started(1))
    with pytest.raises(UnknownTournamentError):
        await store.load_tournament("nope")
    with pytest.raises(UnknownTournamentError):
        await store.set_tournament_deadline("nope", NOW)
    tid = await store.create_tournament(arena(), created_by="alice", now=NOW)
    for args in ((-1, [Started(1)]), (0, []), (0, [Started(10**20)])):
        with pytest.raises(ValueError):
            await store.append_tournament_events(tid, *args)
    with pytest.raises(ValueError):
        await store.load_tournament("../etc")
    with pytest.raises(ValueError):
        await store.create_tournament(arena(), created_by=" padded ", now=NOW)
    assert (await store.load_tournament(tid)).events == ()


async def test_deadlines_and_listings(store: Store) -> None:
    minute = 60_000
    ids = [
        await store.create_tournament(arena(START_MS + k * minute), created_by="alice", now=NOW + timedelta(seconds=k))
        for k in range(3)
    ]
    when_joined = await store.create_tournament(
        arena(None, start_when_joined=4), created_by=None, now=NOW + timedelta(seconds=3)
    )

    async def due(at_ms: int) -> Sequence[str]:
        return [info.id for info in await store.due_tournaments(ms_datetime(at_ms))]

    assert await due(START_MS - 1) == []
    assert await due(START_MS + minute) == ids[:2]
    # The first started: its next deadline is its end; the last one moves earlier.
    await store.append_tournament_events(ids[0], 0, [Joined("a", "A", 1, 1), Joined("b", "B", 1, 1), Started(START_MS)])
    await store.set_tournament_deadline(ids[0], ms_datetime(START_MS + 60 * minute))
    await store.set_tournament_deadline(ids[2], ms_datetime(START_MS - minute))
    assert await due(START_MS + minute) == [ids[2], ids[1]]
    await store.set_tournament_deadline(when_joined, ms_datetime(START_MS))
    assert await due(START_MS + 60 * minute) == [ids[2], when_joined, ids[1], ids[0]]
    # A finished tournament is never due; a deadline cleared is none.
    await store.append_tournament_event(ids[0], 3, Ended(START_MS + 60 * minute))
    await store.set_tournament_deadline(ids[1], None)
    assert await due(START_MS + 60 * minute) == [ids[2], when_joined]

    listed = await store.list_tournaments()
    assert [i.id for i in listed] == [when_joined, *reversed(ids)]  # the newest first
    assert [i.id for i in await store.list_tournaments("finished")] == [ids[0]]
    assert [i.id for i in await store.list_tournaments(("created", "started"), limit=2)] == [when_joined, ids[2]]
    with pytest.raises(ValueError):
        await store.list_tournaments("paused")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        await store.list_tournaments(limit=0)


async def test_the_key_refuses_a_racing_insert(store: Store, backend: str, db_schema: str | None, pg_dsn: str) -> None:
    """PostgreSQL, where writers run side by side: an append that saw n events, racing another
    transaction's uncommitted event n, waits on the key and is refused when that one commits."""
    if backend != "postgresql":
        pytest.skip("SQLite serialises its writers (BEGIN IMMEDIATE): no insert races there")
    tid = await store.create_tournament(arena(), created_by="alice", now=NOW)
    other = await asyncpg.connect(pg_dsn, server_settings={"search_path": db_schema or "public"})
    try:
        racer = other.transaction()
        await racer.start()
        await other.execute(
            "INSERT INTO tournament_events (tournament_id, seq, event, at) VALUES ($1, 0, $2, now())",
            tid, json.dumps(event_json(Joined("z", "Z", 1500, 1))),
        )
        append = asyncio.ensure_future(store.append_tournament_event(tid, 0, Joined("a", "A", 1500, 2)))
        blocked = "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))"
        await poll(lambda: other.fetchval(blocked, other.get_server_pid()), lambda n: n == 1)  # the append waits on the key
        await racer.commit()
        with pytest.raises(TournamentConflictError):
            await append
    finally:
        await other.close()
    assert (await store.load_tournament(tid)).events == (Joined("z", "Z", 1500, 1),)


async def test_unfinished_ids_paged_by_key(store: Store) -> None:
    """Every unfinished tournament, however many: pages in id order, each after the last id
    of the one before, a finished tournament never listed."""
    ids = [await store.create_tournament(arena(), created_by="alice", now=NOW) for _ in range(7)]
    finished = sorted(ids)[2]
    await store.append_tournament_events(finished, 0, [Joined("a", "A", 1, 1), Joined("b", "B", 1, 1), Started(START_MS)])
    await store.append_tournament_event(finished, 3, Ended(START_MS + 1))
    unfinished = sorted(set(ids) - {finished})
    assert await store.unfinished_tournament_ids() == unfinished
    assert await store.unfinished_tournament_ids(limit=2) == unfinished[:2]
    assert await store.unfinished_tournament_ids(after=unfinished[1], limit=2) == unfinished[2:4]
    assert await store.unfinished_tournament_ids(after=unfinished[-1]) == []
    for page in (1, 2, 3, 6, 7):
        assert [tid async for tid in each_unfinished_id(store, page=page)] == unfinished
    with pytest.raises(ValueError):
        await store.unfinished_tournament_ids(limit=501)


async def test_chat_lines_last_fifty_oldest_first(store: Store) -> None:
    """A tournament's chat: lines stored in order, the last 50 read oldest first, another
    tournament's apart; a line for no tournament refused."""
    tid = await store.create_tournament(arena(), created_by=None, now=NOW)
    other = await store.create_tournament(arena(), created_by=None, now=NOW)
    player = await store.create_player("Chatter", "hash")
    for index in range(53):
        at = NOW + timedelta(milliseconds=index)
        await store.add_tournament_chat_line(
            tid, player_id=player.id, name="Chatter", text=f"line {index}", at=at
        )
    await store.add_tournament_chat_line(
        other, player_id=player.id, name="Chatter", text="elsewhere", at=NOW
    )
    lines = await store.tournament_chat_lines(tid)
    assert [line.text for line in lines] == [f"line {i}" for i in range(3, 53)]
    assert lines[0].at == NOW + timedelta(milliseconds=3) and lines[0].name == "Chatter"
    assert [line.text for line in await store.tournament_chat_lines(other)] == ["elsewhere"]
    with pytest.raises(UnknownTournamentError):
        await store.add_tournament_chat_line(
            "N0tThere", player_id=player.id, name="Chatter", text="lost", at=NOW
        )
    assert await store.tournament_chat_lines("N0tThere") == []

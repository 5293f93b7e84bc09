"""Every action that changes a game's record is stored before anyone hears of it, and an
acknowledged one survives SIGKILL — each kind of ending and the takeback, on SQLite and on
PostgreSQL, with the database down and up at the moment of the action.

One ``python -m server`` process holds one game per kind, brought to the moment of its action;
then the database is cut (or not), the actions are made, the process is killed with SIGKILL and a
new one starts on the same database:

* database up: every action is acknowledged only once stored, and after the restart the
  database holds each ending and the takeback;
* database down: each player's action is refused with its ``*_not_saved`` error and after the
  restart its game is running as before; the flag fall the server decided during the outage
  was told to nobody, and after the restart it is in the database (kept in the journal across
  the crash).

Outages: PostgreSQL is reached through a TCP forwarder that the test cuts; SQLite's write lock
is held by the test (the server's writes give up after ``sqlite_busy_timeout_s``).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import wait_until
from ws_support import (
    Client,
    Game,
    kill_server,
    pg_behind_proxy,
    start_game,
    start_server,
    stop_server,
)

from server.store import GameRecord, Store
from server.store.migrate import upgrade_to_head

SERVER_SETTINGS = {"reconnect_grace_s": "1", "sqlite_busy_timeout_s": "0.3"}
SPARTAN_CYCLE = ["g1f3", "a8c6", "f3g1", "c6a8"]  # back to the start: twice is a 3-fold repetition
FLAG_TC = {"kind": "byoyomi", "main_s": 0, "period_s": 2, "periods": 1}
ABANDON_TC = {"kind": "fischer", "base_s": 30, "inc_s": 0}  # claimable after 3 s away


@dataclass
class Database:
    """The database the server uses (``url``), one the test reads (``direct_url``), and a
    switch to make it unreachable for the server."""

    url: str
    direct_url: str
    cut: Callable[[], Awaitable[None]]
    restore: Callable[[], Awaitable[None]]


@pytest.fixture(params=["sqlite", "postgresql"])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    if request.param == "sqlite":
        path = tmp_path / "endings.sqlite3"
        url = f"sqlite+aiosqlite:///{path}"
        locker: list[sqlite3.Connection] = []

        async def lock() -> None:
            # Holding the write lock: every write of the server times out as unavailable.
            def take() -> None:
                connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
                connection.execute("BEGIN IMMEDIATE")
                locker.append(connection)

            await asyncio.to_thread(take)

        async def unlock() -> None:
            connection = locker.pop()
            connection.execute("ROLLBACK")
            connection.close()

        yield Database(url, url, lock, unlock)
        for connection in locker:
            connection.close()
        return
    async with pg_behind_proxy() as (via_proxy, direct, proxy):
        await upgrade_to_head(direct)
        yield Database(via_proxy, direct, proxy.cut, proxy.restore)


@dataclass
class Case:
    """One game brought to the moment of its action."""

    game: Game
    action: Callable[[], Awaitable[dict[str, Any]]]
    refusal: str
    plies: int


async def pair(url: str, name: str) -> tuple[Client, Client]:
    first, second = await Client.open(url, f"{name}1"), await Client.open(url, f"{name}2")
    await first.register(f"{name}1")
    await second.register(f"{name}2")
    return first, second


async def prepare(url: str) -> dict[str, Case]:
    """One game per kind of action, each just before its action (the flag game last: its
    clock runs out 2 s after its second move)."""
    cases: dict[str, Case] = {}

    def command(client: Client, t: str, game: Game, **extra: Any) -> Callable[[], Awaitable[Any]]:
        return lambda: client.request(t, {"game": game.id, **extra})

    game = await start_game(*await pair(url, "resign"))
    await game.play("a1b2")
    cases["resignation"] = Case(game, command(game.first, "resign", game), "resign_not_saved", 1)

    game = await start_game(*await pair(url, "abort"))
    await game.play("a1b2")
    cases["abort"] = Case(game, command(game.second, "abort", game), "abort_not_saved", 1)

    game = await start_game(*await pair(url, "agree"), variant="spartan")
    for uci in SPARTAN_CYCLE[:2]:
        await game.play(uci)
    await game.second.ok("draw_offer", {"game": game.id})
    cases["agreement"] = Case(game, command(game.first, "draw_accept", game), "draw_not_saved", 2)

    game = await start_game(*await pair(url, "claim"), variant="spartan")
    for uci in SPARTAN_CYCLE * 2:
        await game.play(uci)
    cases["repetition"] = Case(game, command(game.first, "claim_draw", game), "draw_not_saved", 8)

    game = await start_game(*await pair(url, "takeback"))
    for uci in ("a1b2", "a5a2"):
        await game.play(uci)
    await game.first.ok("takeback_offer", {"game": game.id})
    cases["takeback"] = Case(
        game, command(game.second, "takeback_accept", game), "takeback_not_saved", 2
    )

    game = await start_game(*await pair(url, "abandon"), tc=ABANDON_TC)
    for uci in ("a1b2", "a5a2"):
        await game.play(uci)
    await game.second.close()
    await game.first.next(lambda m: m["t"] == "gone" and m["d"]["claimable"], timeout=15)
    cases["abandonment"] = Case(
        game, command(game.first, "abandon_claim", game, outcome="win"), "abandon_not_saved", 2
    )

    game = await start_game(*await pair(url, "flag"), tc=FLAG_TC)
    for uci in ("a1b2", "a5a2"):
        await game.play(uci)  # the first player's last period (2 s) runs from now
    cases["time"] = Case(game, lambda: game.first.next("end"), "", 2)
    return cases


EXPECTED = {  # (status, result, termination) once stored
    "resignation": ("finished", "0-1", "resignation"),
    "abort": ("aborted", None, "abort"),
    "agreement": ("finished", "1/2-1/2", "agreement"),
    "repetition": ("finished", "1/2-1/2", "repetition"),
    "abandonment": ("finished", "1-0", "abandonment"),
    "time": ("finished", "0-1", "time"),
}


async def stored_games(database: Database, cases: dict[str, Case]) -> dict[str, GameRecord]:
    async with Store.from_url(database.direct_url, pool_size=1) as store:
        found = {kind: await store.get_game(case.game.id) for kind, case in cases.items()}
    assert all(game is not None for game in found.values())
    return {kind: game for kind, game in found.items() if game is not None}


async def test_acknowledged_endings_and_takebacks_survive_sigkill(
    database: Database, tmp_path: Path
) -> None:
    process, port = await start_server(database.url, tmp_path, **SERVER_SETTINGS)
    try:
        cases = await prepare(f"ws://127.0.0.1:{port}/ws")
        for kind, case in cases.items():
            answer = await case.action()
            assert answer["t"] != "error", f"{kind}: {answer}"
            if kind != "time":
                assert answer["t"] == "ack"  # sent only after the commit
        await kill_server(process)
    finally:
        await stop_server(process)

    process, port = await start_server(database.url, tmp_path, **SERVER_SETTINGS)
    try:
        games = await stored_games(database, cases)
        for kind, expected in EXPECTED.items():
            game = games[kind]
            assert (game.status, game.result, game.termination) == expected, kind
            assert len(game.moves) == cases[kind].plies, kind
        assert games["takeback"].status == "started" and games["takeback"].moves == ()
    finally:
        await stop_server(process)


async def test_actions_during_an_outage_change_nothing_and_a_flag_fall_survives_sigkill(
    database: Database, tmp_path: Path
) -> None:
    process, port = await start_server(database.url, tmp_path, **SERVER_SETTINGS)
    try:
        cases = await prepare(f"ws://127.0.0.1:{port}/ws")
        flag = cases.pop("time")
        await database.cut()
        for kind, case in cases.items():
            answer = await case.action()
            assert answer["t"] == "error" and answer["d"]["code"] == case.refusal, kind
            assert answer["d"]["state"]["status"] == "started", kind
            assert answer["d"]["state"]["ply"] == case.plies, kind
        # The flag falls while the database is down: decided, kept in the journal, told nobody.
        journal = tmp_path / "data" / "journal" / f"{flag.game.id}.json"
        await wait_until(journal.exists, timeout=15)
        for client in (flag.game.first, flag.game.second):
            assert "end" not in [m["t"] for m in await client.settled()]
        await kill_server(process)
    finally:
        await stop_server(process)
    await database.restore()

    process, port = await start_server(database.url, tmp_path, **SERVER_SETTINGS)
    try:
        cases["time"] = flag
        games = await stored_games(database, cases)
        time_out = games.pop("time")
        assert (time_out.status, time_out.result, time_out.termination) == EXPECTED["time"]
        for kind, game in games.items():
            assert game.status == "started", kind
            assert len(game.moves) == cases[kind].plies, kind
        assert not journal.exists()
        # The refused resignation can be made now: the resumed game is as it was.
        url = f"ws://127.0.0.1:{port}/ws"
        resign = cases["resignation"].game
        assert resign.first.token is not None
        client = await Client.open(url, "again")
        await client.resume(resign.first.token)
        await client.ok("join", {"game": resign.id})
        snapshot = await client.next("game")
        assert snapshot["d"]["status"] == "started" and snapshot["d"]["moves"] == ["a1b2"]
        await client.ok("resign", {"game": resign.id})
        assert (await client.next("end"))["d"]["termination"] == "resignation"
    finally:
        await stop_server(process)

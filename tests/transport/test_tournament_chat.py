"""A tournament's chat over the live websocket (docs/tournaments.md, "Chat"): a line reaches
every watcher of the tournament whatever page it watches, in order, and nobody else (the
sentinel); a watch is shown the last 50 lines, oldest first, also after a restart (SQLite and
PostgreSQL); guests are refused, and the per-account and per-tournament limits refuse before
anything is stored while another account is served."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from tournament_players import registered
from tournament_watch import WallClock
from ws_support import Client, Msg, OpenClient, StartApp

from server.app import App
from server.hub.tournament.values import Joined, TournamentSettings
from server.rules.time_control import Fischer
from server.store.tournaments import ms_datetime
from server.transport.accounts import store_player_id

NOW = 1_800_000_000_000


async def cup_of_eleven(app: App) -> str:
    """A Swiss not started with 11 entries: two pages of standings."""
    settings = TournamentSettings(
        "Chat cup",
        "swiss",
        "wildcastle",
        Fischer(60_000, 0),
        rated=False,
        start_when_joined=50,
        rounds=3,
    )
    tid = await app.store.create_tournament(settings, created_by=None, now=ms_datetime(NOW))
    joined = [Joined(f"c{i:02d}", f"chatter{i:02d}", 2000 - i, NOW) for i in range(11)]
    await app.store.append_tournament_events(tid, 0, joined)
    return tid


async def watch(client: Client, tid: str, page: int | None = None) -> tuple[Msg, list[Msg]]:
    """Watch the tournament: its view, then the chat's last lines (the next message)."""
    answer = await client.request("tournament_watch", {"id": tid, "page": page})
    assert answer["t"] == "tournament", answer
    chat = await client.recv()
    assert chat["t"] == "tournament_chat" and chat["d"]["id"] == tid, chat
    return answer["d"], chat["d"]["lines"]


async def said(client: Client, tid: str) -> Msg:
    """The next line pushed to ``client`` (one a message)."""
    message = await client.next("tournament_chat")
    assert message["d"]["id"] == tid and len(message["d"]["lines"]) == 1, message
    line: Msg = message["d"]["lines"][0]
    return line


def texts(lines: list[Msg]) -> list[str]:
    return [line["text"] for line in lines]


async def refused(client: Client, d: dict[str, Any], code: str) -> Msg:
    answer = await client.request("tournament_chat", d)
    assert answer["t"] == "error" and answer["d"]["code"] == code, answer
    return answer


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_lines_reach_every_watcher_and_the_history_outlives_a_restart(
    start_app: StartApp, open_client: OpenClient, backend: str
) -> None:
    app = await start_app(backend)
    alice, bob = await registered(open_client, app, ["chalice", "chbob"])
    assert alice.player is not None
    tid = await cup_of_eleven(app)
    # 55 lines stored before anyone watched: a watch shows the last 50, oldest first.
    alice_id = store_player_id(str(alice.player["id"]))
    assert alice_id is not None
    for index in range(55):
        await app.store.add_tournament_chat_line(
            tid, player_id=alice_id, name="chalice", text=f"old {index}", at=ms_datetime(NOW)
        )
    first, second = await open_client(app, "first"), await open_client(app, "second")
    await first.guest()
    await second.guest()
    one, history = await watch(first, tid)
    assert one["page"] == 1 and texts(history) == [f"old {i}" for i in range(5, 55)]
    two, again = await watch(second, tid, page=2)
    assert two["page"] == 2 and again == history
    assert history[0] == {"user": "chalice", "text": "old 5", "at": NOW}

    # Lines from two accounts reach both watchers (pages 1 and 2), in the order served.
    for client, text in ((alice, "hello"), (bob, "hi there"), (alice, "good luck")):
        assert await client.ok("tournament_chat", {"id": tid, "text": text}) == {"tournament": tid}
    for watcher in (first, second):
        lines = [await said(watcher, tid) for _ in range(3)]
        assert [(line["user"], line["text"]) for line in lines] == [
            ("chalice", "hello"),
            ("chbob", "hi there"),
            ("chalice", "good luck"),
        ]
        assert all(isinstance(line["at"], int) for line in lines)
    expected = [f"old {i}" for i in range(8, 55)] + ["hello", "hi there", "good luck"]
    later = await open_client(app, "later")
    await later.guest()
    assert texts((await watch(later, tid))[1]) == expected

    # A restart: the new hub reads the same last 50 from the store.
    await app.stop()
    restarted = await start_app(
        database_url=app.settings.database_url, journal_dir=app.settings.journal_dir
    )
    reader = await open_client(restarted, "reader")
    await reader.guest()
    assert texts((await watch(reader, tid))[1]) == expected


async def test_only_the_watchers_of_the_tournament_are_told(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    [poster] = await registered(open_client, app, ["chposter"])
    tid, other = await cup_of_eleven(app), await cup_of_eleven(app)
    watcher, elsewhere, gone, never = [
        await open_client(app, name) for name in ("watcher", "elsewhere", "gone", "never")
    ]
    for client in (watcher, elsewhere, gone, never):
        await client.guest()
    await watch(watcher, tid)
    await watch(elsewhere, other)
    await watch(gone, tid)
    await gone.ok("tournament_unwatch", {"id": tid})
    await poster.ok("tournament_chat", {"id": tid, "text": "only here"})
    assert texts([await said(watcher, tid)]) == ["only here"]
    for client in (elsewhere, gone, never, poster):
        assert [m for m in await client.settled() if m["t"] == "tournament_chat"] == []


async def test_refusals_store_nothing_and_the_honest_account_is_served(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """Guests and anonymous connections, unknown tournaments, bad text; the per-account limit
    (here 3 a minute) stops the attacker before the store while another account is served; a
    minute later the attacker may again."""
    clock = WallClock(NOW)
    app = await start_app(tournament_chat_per_minute=3, app_options={"tournament_clock": clock})
    attacker, honest = await registered(open_client, app, ["chattacker", "chhonest"])
    guest, anonymous, watcher = [
        await open_client(app, name) for name in ("guest", "anonymous", "watcher")
    ]
    await guest.guest()
    await watcher.guest()
    tid = await cup_of_eleven(app)
    await watch(watcher, tid)
    answer = await refused(guest, {"id": tid, "text": "hi"}, "registered_only")
    assert "Log in with an account" in answer["d"]["message"]
    await refused(anonymous, {"id": tid, "text": "hi"}, "not_authenticated")
    await refused(honest, {"id": "N0tThere", "text": "hi"}, "no_such_tournament")
    for text in ("", " ", " \u3000 ", "x" * 141, "bell\x07", "rtl\u202e"):
        await refused(honest, {"id": tid, "text": text}, "bad_request")
    assert await app.store.tournament_chat_lines(tid) == []

    for index in range(3):
        await attacker.ok("tournament_chat", {"id": tid, "text": f"spam {index}"})
    answer = await refused(attacker, {"id": tid, "text": "spam 3"}, "rate_limited")
    assert "At most 3 chat lines a minute per account" in answer["d"]["message"]
    await honest.ok("tournament_chat", {"id": tid, "text": "x" * 140})  # served beside
    stored = [line.text for line in await app.store.tournament_chat_lines(tid)]
    assert stored == ["spam 0", "spam 1", "spam 2", "x" * 140]
    told = [await said(watcher, tid) for _ in range(4)]
    assert texts(told) == stored
    assert [m for m in await watcher.settled() if m["t"] == "tournament_chat"] == []
    clock.now_ms += 60_001
    await attacker.ok("tournament_chat", {"id": tid, "text": "a minute later"})


async def test_a_tournament_takes_a_few_lines_a_second_in_all(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """``tournament_chat_lines_per_s`` (here 2): a third line in the same second, from any
    account, is refused before the store; another tournament is served; a second later the
    tournament takes lines again."""
    clock = WallClock(NOW)
    app = await start_app(tournament_chat_lines_per_s=2, app_options={"tournament_clock": clock})
    alice, bob, carol = await registered(open_client, app, ["chra", "chrb", "chrc"])
    tid, other = await cup_of_eleven(app), await cup_of_eleven(app)
    await alice.ok("tournament_chat", {"id": tid, "text": "one"})
    await bob.ok("tournament_chat", {"id": tid, "text": "two"})
    answer = await refused(carol, {"id": tid, "text": "three"}, "rate_limited")
    assert "at most 2 chat lines a second" in answer["d"]["message"]
    await carol.ok("tournament_chat", {"id": other, "text": "elsewhere"})
    assert texts_of(await app.store.tournament_chat_lines(tid)) == ["one", "two"]
    clock.now_ms += 1001
    await carol.ok("tournament_chat", {"id": tid, "text": "three"})


def texts_of(lines: list[Any]) -> list[str]:
    return [line.text for line in lines]


async def test_a_large_group_is_told_every_line_in_order(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """250 watchers (over the batch of 100: told in batches, the loop free between two) get
    each line once, in order, the same bytes for all."""
    app = await start_app()
    [poster] = await registered(open_client, app, ["chlarge"])
    tid = await cup_of_eleven(app)
    told: list[list[bytes]] = [[] for _ in range(250)]
    done = asyncio.Event()

    def watcher(index: int) -> Callable[[bytes], None]:
        def tell(frame: bytes) -> None:
            if b'"tournament_chat"' in frame:
                told[index].append(frame)
                if all(len(frames) == 3 for frames in told):
                    done.set()

        return tell

    for index in range(250):
        await app.tournaments.watch(tid, watcher(index), page=1 + index % 2)
    for text in ("one", "two", "three"):
        await poster.ok("tournament_chat", {"id": tid, "text": text})
    await asyncio.wait_for(done.wait(), 15)
    frames = told[0]
    assert [json.loads(frame)["d"]["lines"][0]["text"] for frame in frames] == [
        "one",
        "two",
        "three",
    ]
    assert all(got == frames for got in told)
    assert all(a is b for got in told for a, b in zip(got, frames, strict=True))

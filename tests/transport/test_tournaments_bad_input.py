"""Bad tournament input over the live websocket: every refusal of the core and of the door is
the one ``error`` with its code and changes nothing stored; malformed tournament frames
(hypothesis) are refused with ``bad_request`` and change nothing; the daily creation limit
stops one account while another is served."""

from __future__ import annotations

from typing import Any

import pytest
from fuzz_frames import frames
from fuzz_schema import TOURNAMENT_SCHEMA
from fuzz_values import draw_examples
from hypothesis import strategies as st
from test_transport_fuzz import check_refused
from tournament_players import WILD_FISCHER, registered
from tournament_watch import WallClock
from ws_support import Client, OpenClient, StartApp

from server.app import App

ARENA = {"name": "Bad input cup", "format": "arena", "variant": "wildcastle", "tc": WILD_FISCHER}


async def stored(app: App, tournament_id: str) -> tuple[Any, ...]:
    """What a refused request must leave as it was: the stored events, the view and the chat."""
    kept = await app.store.load_tournament(tournament_id)
    chat = await app.store.tournament_chat_lines(tournament_id)
    return kept.events, await app.tournaments.view(tournament_id), chat


async def refused(client: Client, t: str, d: dict[str, Any] | None, code: str) -> None:
    answer = await client.request(t, d)
    assert answer["t"] == "error", answer
    assert answer["d"]["code"] == code, answer


async def test_refusals_change_nothing(start_app: StartApp, open_client: OpenClient) -> None:
    app = await start_app()
    alice, bob, carol = await registered(open_client, app, ["tbalice", "tbbob", "tbcarol"])
    guest = await open_client(app, "guest")
    await guest.guest()
    anonymous = await open_client(app, "anonymous")
    arena = (
        await alice.ok(
            "tournament_create",
            {
                **ARENA,
                "duration_s": 600,
                "start_at_ms": 4_000_000_000_000,
                "password": "sesame",
                "max_players": 2,
                "rated": True,
            },
        )
    )["tournament"]
    await alice.ok("tournament_join", {"id": arena, "password": "sesame"})
    before = await stored(app, arena)
    await refused(alice, "tournament_join", {"id": arena, "password": "sesame"}, "already_entered")
    await refused(bob, "tournament_join", {"id": arena}, "wrong_tournament_password")
    await refused(
        bob, "tournament_join", {"id": arena, "password": "open up"}, "wrong_tournament_password"
    )
    await refused(bob, "tournament_withdraw", {"id": arena}, "not_entered")
    await refused(bob, "tournament_pause", {"id": arena}, "not_entered")
    await refused(alice, "tournament_pause", {"id": arena, "pause": False}, "not_paused")
    await refused(
        guest, "tournament_join", {"id": arena, "password": "sesame"}, "guests_casual_only"
    )
    await refused(
        guest,
        "tournament_create",
        {**ARENA, "duration_s": 60, "start_when_joined": 2},
        "guests_casual_only",
    )
    await refused(anonymous, "tournament_join", {"id": arena}, "not_authenticated")
    await refused(bob, "tournament_join", {"id": "N0tThere"}, "no_such_tournament")
    await refused(bob, "tournament_watch", {"id": "N0tThere"}, "no_such_tournament")
    assert await stored(app, arena) == before
    await bob.ok("tournament_join", {"id": arena, "password": "sesame"})
    await refused(carol, "tournament_join", {"id": arena, "password": "sesame"}, "tournament_full")
    strict = (
        await alice.ok(
            "tournament_create",
            {
                **ARENA,
                "format": "swiss",
                "rounds": 3,
                "start_at_ms": 4_000_000_000_000,
                "min_rating": 1600,
                "bots": False,
            },
        )
    )["tournament"]
    before = await stored(app, strict)
    await refused(bob, "tournament_join", {"id": strict}, "rating_too_low")
    await refused(bob, "tournament_pause", {"id": strict}, "not_arena")
    assert await stored(app, strict) == before
    # Settings the core refuses, and bad combinations: nothing created.
    count = len(await app.tournaments.list())
    for bad in (
        {**ARENA},  # no start
        {**ARENA, "start_when_joined": 2},  # an arena without duration
        {**ARENA, "format": "swiss", "start_when_joined": 2},  # a Swiss without rounds
        {**ARENA, "format": "swiss", "rounds": 2, "duration_s": 5, "start_when_joined": 2},
        {**ARENA, "duration_s": 60, "start_when_joined": 2, "rounds": 3},
    ):
        await refused(alice, "tournament_create", bad, "bad_request")
    await refused(
        alice,
        "tournament_create",
        {**ARENA, "variant": "xiangqi", "duration_s": 60, "start_when_joined": 2},
        "unknown_variant",
    )
    await refused(
        alice,
        "tournament_create",
        {
            **ARENA,
            "tc": {"kind": "byoyomi", "main_s": 60, "period_s": 10, "periods": 1},
            "duration_s": 60,
            "start_when_joined": 2,
        },
        "byoyomi_unavailable",
    )
    assert len(await app.tournaments.list()) == count


async def test_a_finished_or_closed_tournament_refuses_entries(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    alice, bob, carol = await registered(open_client, app, ["tcalice", "tcbob", "tccarol"])
    robin = (
        await alice.ok(
            "tournament_create",
            {**ARENA, "format": "round_robin", "start_when_joined": 2},
        )
    )["tournament"]
    await alice.ok("tournament_join", {"id": robin})
    await bob.ok("tournament_join", {"id": robin})  # starts: a round robin's table is fixed
    before = await stored(app, robin)
    await refused(carol, "tournament_join", {"id": robin}, "tournament_finished")
    await alice.ok("tournament_withdraw", {"id": robin})
    await refused(alice, "tournament_withdraw", {"id": robin}, "not_entered")
    assert (await stored(app, robin))[0][: len(before[0])] == before[0]


async def test_the_daily_creation_limit_stops_one_account_only(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(tournaments_per_day=2)
    attacker, honest = await registered(open_client, app, ["tlattacker", "tlhonest"])
    data = {**ARENA, "duration_s": 60, "start_at_ms": 4_000_000_000_000}
    for _ in range(2):
        await attacker.ok("tournament_create", data)
    await refused(attacker, "tournament_create", data, "tournament_limit")
    created = (await honest.ok("tournament_create", data))["tournament"]
    await honest.ok("tournament_join", {"id": created})
    listed = (await honest.request("tournament_list", {"status": "created"}))["d"]["tournaments"]
    assert len(listed) == 3 and listed[0]["id"] == created


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_malformed_tournament_frames_are_refused_and_change_nothing(
    start_app: StartApp, open_client: OpenClient, backend: str
) -> None:
    app = await start_app(backend, rate_limit_per_s=100_000.0, rate_limit_burst=100_000)
    alice, bob = await registered(open_client, app, ["tfalice", "tfbob"])
    anonymous = await open_client(app, "anonymous")
    tid = (
        await alice.ok(
            "tournament_create",
            {**ARENA, "duration_s": 600, "start_at_ms": 4_000_000_000_000, "password": "sesame"},
        )
    )["tournament"]
    await bob.ok("tournament_watch", {"id": tid})
    assert (await bob.next("tournament_chat"))["d"]["lines"] == []  # the watch's chat
    await alice.ok("tournament_join", {"id": tid, "password": "sesame"})
    await bob.next("tournament_standings")  # the join's push, before the frames
    kinds = st.sampled_from(sorted(TOURNAMENT_SCHEMA))
    drawn = draw_examples(frames(kinds=kinds), 160)
    assert {frame.kind for frame in drawn} == set(TOURNAMENT_SCHEMA)
    before = await stored(app, tid), len(await app.tournaments.list())
    senders = [alice, bob, anonymous]
    for index, frame in enumerate(drawn):
        await check_refused(senders[index % 3], frame, {"tournament": tid})
    assert (await stored(app, tid), len(await app.tournaments.list())) == before
    # bob still watches: a change reaches him, and only that.
    assert await bob.settled() == []
    await alice.ok("tournament_withdraw", {"id": tid})
    pushed = await bob.next("tournament_standings")
    assert pushed["d"]["standings"][0]["status"] == "withdrawn"


async def test_the_entries_limit_stops_one_account_before_the_store(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """Joins, withdrawals and pauses per account and minute (``tournament_entries_per_minute``):
    over it, refused before anything is stored; another account is served; a minute later the
    account may again."""
    clock = WallClock()
    app = await start_app(tournament_entries_per_minute=3, app_options={"tournament_clock": clock})
    attacker, honest = await registered(open_client, app, ["elattacker", "elhonest"])
    data = {**ARENA, "duration_s": 600, "start_at_ms": 4_000_000_000_000}
    tid = (await honest.ok("tournament_create", data))["tournament"]
    await attacker.ok("tournament_join", {"id": tid})
    await attacker.ok("tournament_withdraw", {"id": tid})
    await attacker.ok("tournament_join", {"id": tid})
    before = await stored(app, tid)
    answer = await attacker.request("tournament_withdraw", {"id": tid})
    assert answer["t"] == "error" and answer["d"]["code"] == "tournament_entry_limit", answer
    assert "At most 3 tournament joins, withdrawals and pauses a minute" in answer["d"]["message"]
    await refused(attacker, "tournament_pause", {"id": tid}, "tournament_entry_limit")
    assert await stored(app, tid) == before
    await honest.ok("tournament_join", {"id": tid})  # the honest player beside is served
    clock.now_ms += 60_001
    await attacker.ok("tournament_withdraw", {"id": tid})
    rows = {row.name: row.status for row in await app.tournaments.standings(tid)}
    assert rows == {"elattacker": "withdrawn", "elhonest": "active"}

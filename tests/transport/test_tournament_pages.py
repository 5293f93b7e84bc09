"""Standings by page on the websocket (docs/tournaments.md, "Scale"): a Swiss of 25 players in
round 1, its events stored directly (no games played: cheap); watchers of page 1 and page 2;
a result that changes page 2 only reaches page 2's watchers (page 1's get nothing: the
sentinel); a player's default page holds their row; bad pages are refused."""

from __future__ import annotations

from typing import Any

from fuzz_values import draw_examples
from hypothesis import strategies as st
from tournament_players import registered
from ws_support import Client, Msg, OpenClient, StartApp

from server.hub.effects import GameFinished
from server.hub.lobby import TournamentTag
from server.hub.tournament.pages import MAX_STANDINGS_PAGE, PAGE_SIZE
from server.hub.tournament.values import (
    Bye,
    Finished,
    Joined,
    Paired,
    Started,
    TournamentGame,
    TournamentSettings,
)
from server.rules.time_control import Fischer
from server.store.tournaments import ms_datetime

NOW = 1_800_000_000_000
PLAYERS = 25


async def swiss_in_round_one(app: Any, me: str) -> tuple[str, list[str]]:
    """A Swiss of 25 (``me`` the 16th by rating) in round 1: p_i plays p_(i+12), the last has
    the bye; games 0–9 won by white, game 10 (p10–p22) and 11 (p11–p23) being played. Then
    11 players have a point (ranks 1–11), 14 none."""
    ids = [f"x{i:02d}" for i in range(PLAYERS)]
    ids[15] = me
    settings = TournamentSettings(
        "Paged cup", "swiss", "wildcastle", Fischer(60_000, 0), rated=False,
        start_when_joined=PLAYERS, rounds=3,
    )
    tid = await app.store.create_tournament(settings, created_by=None, now=ms_datetime(NOW))
    events: list[Any] = [
        Joined(pid, f"name{i:02d}", 2000 - 10 * i, NOW) for i, pid in enumerate(ids)
    ]
    events.append(Started(NOW))
    events += [Paired(f"PgGame{i:02d}", 1, ids[i], ids[i + 12], NOW) for i in range(12)]
    events.append(Bye(ids[24], 1, 1.0, NOW))
    events += [
        Finished(f"PgGame{i:02d}", TournamentGame(ids[i], ids[i + 12], "1-0", 20), NOW)
        for i in range(10)
    ]
    await app.store.append_tournament_events(tid, 0, events)
    return tid, ids


def end_of(tid: str, game: str, white: str, black: str, result: str) -> GameFinished:
    return GameFinished(
        game, "wildcastle", False, white, black, result, "agreement", 20, "", NOW,
        tournament=TournamentTag(tid, 1),
    )


def names(page: Msg) -> list[str]:
    return [row["name"] for row in page["standings"]]


async def test_a_change_of_page_two_reaches_page_two_only(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    [player] = await registered(open_client, app, ["pager"])
    assert player.player is not None
    tid, ids = await swiss_in_round_one(app, str(player.player["id"]))
    first, second = await open_client(app, "first"), await open_client(app, "second")
    await first.guest()
    await second.guest()

    one = await first.ok("tournament_watch", {"id": tid})  # a visitor: page 1
    assert (one["page"], one["pages"], one["players"], one["me"]) == (1, 3, PLAYERS, None)
    assert len(one["standings"]) == PAGE_SIZE and one["standings"][0]["rank"] == 1
    assert all(row["score"] == 1 for row in one["standings"])
    two = await second.ok("tournament_watch", {"id": tid, "page": 2})
    assert two["page"] == 2 and [r["score"] for r in two["standings"]] == [1] + [0] * 9
    # The player's own page holds their row (no point yet: not on page 1), and "me" is it.
    mine = await player.ok("tournament_watch", {"id": tid})
    assert mine["me"] is not None and mine["me"]["player"] == player.player["id"]
    assert mine["me"] in mine["standings"] and mine["page"] > 1

    # p10 and p22 draw: half a point each, ranks 12 and 13: page 2 changes, page 1 does not.
    app.tournaments.game_ended(end_of(tid, "PgGame10", ids[10], ids[22], "1/2-1/2"))
    pushed = await second.next(lambda m: m["t"] == "tournament_standings")
    page = pushed["d"]
    assert (page["page"], page["pages"], page["players"]) == (2, 3, PLAYERS)
    assert [row["score"] for row in page["standings"]][1:3] == [0.5, 0.5]
    assert {"name10", "name22"} <= set(names(page))
    assert page["playing"] == ["PgGame11"] or "name11" not in names(page)
    assert [m for m in await first.settled() if m["t"] == "tournament_standings"] == []

    # The page 1 watcher turns to page 3 (the answer is the page; pushes follow it).
    three = await first.ok("tournament_page", {"id": tid, "page": 3})
    assert three["page"] == 3 and len(three["standings"]) == PLAYERS - 2 * PAGE_SIZE
    # Back to "my position": a visitor has none, page 1.
    assert (await first.ok("tournament_page", {"id": tid}))["page"] == 1

    # A connection watching before it logs in (page 1) logs in and joins late: the watch now
    # follows the player's row, told at once.
    late = await open_client(app, "latecomer")
    assert (await late.ok("tournament_watch", {"id": tid}))["page"] == 1
    assert (await late.register("latecomer"))["t"] == "welcome"
    await late.ok("tournament_join", {"id": tid})
    followed = await late.next(lambda m: m["t"] == "tournament_standings")
    assert followed["d"]["page"] > 1 and "latecomer" in names(followed["d"])


BAD_PAGES = st.one_of(
    st.integers(-(2**31), 0),
    st.integers(MAX_STANDINGS_PAGE + 1, 2**31),
    st.text(max_size=3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.lists(st.integers(0, 3), max_size=2),
)


async def test_bad_pages_are_refused_and_change_nothing(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(rate_limit_per_s=100_000.0, rate_limit_burst=100_000)
    [player] = await registered(open_client, app, ["badpager"])
    assert player.player is not None
    tid, _ids = await swiss_in_round_one(app, str(player.player["id"]))
    watcher: Client = await open_client(app, "watcher")
    await watcher.guest()
    assert (await watcher.ok("tournament_watch", {"id": tid, "page": 2}))["page"] == 2

    drawn = draw_examples(
        st.tuples(
            st.sampled_from(["tournament", "tournament_watch", "tournament_page"]),
            st.one_of(BAD_PAGES, st.integers(4, MAX_STANDINGS_PAGE)),
        ),
        40,
    )
    for kind, page in drawn:
        answer = await watcher.request(kind, {"id": tid, "page": page})
        assert answer["t"] == "error" and answer["d"]["code"] == "bad_request", answer
        if isinstance(page, int) and not isinstance(page, bool) and 4 <= page <= MAX_STANDINGS_PAGE:
            assert answer["d"]["message"] == f"Page {page}: the standings have 3 pages."
        else:
            assert "'page'" in answer["d"]["message"], answer
    # Still watching page 2: its page, as told last, is what a page request without change shows.
    again = await watcher.ok("tournament_page", {"id": tid, "page": 2})
    assert again["page"] == 2 and [r["score"] for r in again["standings"]] == [1] + [0] * 9

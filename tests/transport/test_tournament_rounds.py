"""A tournament's rounds on the websocket (docs/tournaments.md, "Scale"): the view carries the
current round's pairings (bounded), the connection's own games, the counts; any round is read
by page with ``tournament_round``, equal to the whole history; bad rounds and pages are refused
with a clear error and change nothing. A Swiss of 120 players in round 2, its events stored
directly (no games played: cheap)."""

from __future__ import annotations

from typing import Any

from fuzz_values import draw_examples
from hypothesis import strategies as st
from tournament_players import registered
from ws_support import Client, OpenClient, StartApp

from server.hub.tournament.rounds import MAX_ROUND, MAX_ROUND_PAGE, ROUND_PAGE_SIZE, VIEW_PAIRINGS
from server.hub.tournament.values import (
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
PLAYERS = 120


async def swiss_in_round_two(app: Any, me: str) -> tuple[str, list[tuple[str, int, str, str]]]:
    """A Swiss of 120 (``me`` the 48th) in round 2: round 1 x_i – x_(i+60), white wins; round 2
    x_2k – x_(2k+1), the first 20 games drawn, 40 being played. Returns its id and its games
    (id, round, white, black) in pairing order."""
    ids = [f"x{i:03d}" for i in range(PLAYERS)]
    ids[47] = me
    settings = TournamentSettings(
        "Round cup", "swiss", "wildcastle", Fischer(60_000, 0), rated=False,
        start_when_joined=PLAYERS, rounds=3,
    )
    tid = await app.store.create_tournament(settings, created_by=None, now=ms_datetime(NOW))
    events: list[Any] = [
        Joined(pid, f"name{i:03d}", 2000 - 5 * i, NOW) for i, pid in enumerate(ids)
    ]
    events.append(Started(NOW))
    games = [(f"Rd1g{i:02d}", 1, ids[i], ids[i + 60]) for i in range(60)]
    games += [(f"Rd2g{k:02d}", 2, ids[2 * k], ids[2 * k + 1]) for k in range(60)]
    events += [Paired(g, r, w, b, NOW) for g, r, w, b in games[:60]]
    events += [Finished(g, TournamentGame(w, b, "1-0", 20), NOW) for g, _, w, b in games[:60]]
    events += [Paired(g, r, w, b, NOW) for g, r, w, b in games[60:]]
    events += [
        Finished(g, TournamentGame(w, b, "1/2-1/2", 20), NOW) for g, _, w, b in games[60:80]
    ]
    await app.store.append_tournament_events(tid, 0, events)
    return tid, games


async def read_round(client: Client, tid: str, round_: int) -> list[dict[str, Any]]:
    first = await client.ok("tournament_round", {"id": tid, "round": round_})
    assert (first["round"], first["rounds"], first["page"]) == (round_, 2, 1)
    assert (first["pages"], first["total"]) == (2, 60) and len(first["pairings"]) == ROUND_PAGE_SIZE
    second = await client.ok("tournament_round", {"id": tid, "round": round_, "page": 2})
    assert second["page"] == 2 and len(second["pairings"]) == 60 - ROUND_PAGE_SIZE
    return [*first["pairings"], *second["pairings"]]


async def test_the_view_shows_the_current_round_and_each_round_is_read_by_page(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    [player] = await registered(open_client, app, ["rounder"])
    assert player.player is not None
    me = str(player.player["id"])
    tid, games = await swiss_in_round_two(app, me)
    view = await player.ok("tournament", {"id": tid})
    # The current round's first 30 games in board order, of 60; 40 games being played.
    assert view["round"] == 2 and view["pairings_total"] == 60 and view["playing_count"] == 40
    assert [p["game"] for p in view["pairings"]] == [g for g, *_ in games[60 : 60 + VIEW_PAIRINGS]]
    assert view["playing"] == [g for g, *_ in games[80 : 60 + VIEW_PAIRINGS]]
    # The player's own games: round 1's (won, x047 – x107) and round 2's (x046 – x047, playing).
    assert [(p["game"], p["result"]) for p in view["mine"]] == [("Rd1g47", "1-0"), ("Rd2g23", None)]
    visitor = await open_client(app, "visitor")
    await visitor.guest()
    assert (await visitor.ok("tournament", {"id": tid}))["mine"] == []
    # Each round read by page is the history's pairings of that round.
    for round_ in (1, 2):
        read = await read_round(visitor, tid, round_)
        expected = [(g, w, b) for g, r, w, b in games if r == round_]
        assert [(p["game"], p["white"], p["black"]) for p in read] == expected
        assert all(p["round"] == round_ for p in read)
        results = [p["result"] for p in read]
        assert results == (["1-0"] * 60 if round_ == 1 else ["1/2-1/2"] * 20 + [None] * 40)
    page = await visitor.ok("tournament_round", {"id": tid, "round": 2})
    assert page["playing"] == [g for g, *_ in games[80 : 60 + ROUND_PAGE_SIZE]]


BAD_VALUES = st.one_of(
    st.integers(-(2**31), 0),
    st.text(max_size=3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)


async def test_bad_rounds_and_pages_are_refused_and_change_nothing(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(rate_limit_per_s=100_000.0, rate_limit_burst=100_000)
    [player] = await registered(open_client, app, ["badrounder"])
    assert player.player is not None
    tid, _games = await swiss_in_round_two(app, str(player.player["id"]))
    watcher: Client = await open_client(app, "watcher")
    await watcher.guest()
    before = await watcher.ok("tournament", {"id": tid})
    rounds = st.one_of(st.integers(3, MAX_ROUND), st.integers(1, 2), BAD_VALUES, st.none())
    pages = st.one_of(st.integers(3, MAX_ROUND_PAGE), BAD_VALUES)
    for round_, page in draw_examples(st.tuples(rounds, pages), 40):
        answer = await watcher.request("tournament_round", {"id": tid, "round": round_, "page": page})
        assert answer["t"] == "error" and answer["d"]["code"] == "bad_request", answer
        message = answer["d"]["message"]
        good_round = isinstance(round_, int) and not isinstance(round_, bool) and round_ >= 1
        good_page = isinstance(page, int) and not isinstance(page, bool) and page >= 1
        if not good_round:
            assert "'round'" in message, answer
        elif not good_page:
            assert "'page'" in message, answer
        elif round_ > 2:
            assert message == f"Round {round_} is not paired: rounds 1 to 2 are.", answer
        else:
            assert message == f"Page {page}: round {round_}'s pairings have 2 pages.", answer
    missing = await watcher.request("tournament_round", {"id": tid})
    assert missing["t"] == "error" and "'round'" in missing["d"]["message"]
    unknown = await watcher.request("tournament_round", {"id": "NoSuchOne", "round": 1})
    assert unknown["t"] == "error" and unknown["d"]["code"] == "no_such_tournament"
    # Nothing changed: the same view, and the honest reader is answered.
    assert await watcher.ok("tournament", {"id": tid}) == before
    assert (await watcher.ok("tournament_round", {"id": tid, "round": 1}))["total"] == 60

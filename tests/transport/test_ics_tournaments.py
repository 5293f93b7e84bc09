"""The ICS tournament commands over a real TCP connection (docs/ics.md): list, join, play the
pairing like a match (the lines XBoard and zippy read), standings as text; refusals in one line
that change nothing; a hypothesis fuzz of the new commands' arguments."""

from __future__ import annotations

import logging
import re

import pytest
from fuzz_values import draw_examples
from hypothesis import strategies as st
from ics_support import IcsClient, board_fields
from tournament_watch import Standings
from ws_support import UNLIMITED_READS, StartApp

from server.app import App
from server.hub.tournament.values import TournamentSettings
from server.rules.time_control import Fischer

FAST = {"rate_limit_per_s": 100_000.0, "rate_limit_burst": 100_000, **UNLIMITED_READS}


async def round_robin(app: App, name: str = "Wild table") -> str:
    settings = TournamentSettings(
        name=name,
        format="round_robin",
        variant="wildcastle",
        control=Fischer(60_000, 0),
        rated=False,
        start_when_joined=2,
    )
    return await app.tournaments.create(None, settings)


async def test_ics_players_join_play_their_pairing_and_read_the_standings(
    start_app: StartApp,
) -> None:
    app = await start_app(ics=True)
    tid = await round_robin(app)
    alice = await IcsClient.registered(app, "alice")
    bob = await IcsClient.registered(app, "bob")
    await alice.send("tourneys")
    listed = await alice.expect(rf"^{tid} +round-robin +created +1 0 unrated wild/1 +Wild table$")
    assert listed is not None
    await alice.expect(r"^1 tournament displayed")
    await alice.send(f"tjoin {tid}")
    await alice.expect(rf"^You are in tournament {tid}\.$")
    await alice.send(f"tjoin {tid}")
    await alice.expect(r"^You are already in this tournament\.$")
    await alice.send(f"tstandings {tid}")
    await alice.expect(rf"^Tournament {tid}: Wild table$")
    await alice.expect(r"^round-robin, 1 0 unrated wild/1, created, round 0$")
    await alice.expect(r"^Starts when 2 have joined\.$")
    await alice.expect(r"^ +1  alice +0 +0 +0$")
    await alice.expect(r"^1 player\.$")
    # Bob's entry starts it: the pairing reaches both as a match does (Creating, the board).
    await bob.send(f"tjoin {tid}")
    await bob.expect(rf"^You are in tournament {tid}\.$")
    created = await alice.expect(
        r"^\{Game (\d+) \((\w+) vs\. (\w+)\) Creating unrated wild/1 match\.\}$"
    )
    number, white, black = created.groups()
    await bob.expect(rf"^\{{Game {number} \({white} vs\. {black}\) Creating unrated wild/1")
    for client in (alice, bob):
        board = board_fields(await client.board(), 8)
        assert board["game"] == number and (board["white"], board["black"]) == (white, black)
    # White resigns: black wins the only game, the round robin is over.
    standings = await Standings.start(app, tid)
    resigner = alice if white == "alice" else bob
    await resigner.send("resign")
    await alice.expect(rf"^\{{Game {number} \({white} vs\. {black}\) {white} resigns\}} 0-1")
    await standings.until(lambda d: d["status"] == "finished")
    await alice.send(f"tstandings {tid}")
    await alice.expect(r"^round-robin, 1 0 unrated wild/1, finished, round 1$")
    await alice.expect(rf"^ +1  {black} +1 +1 +0$")
    await alice.expect(rf"^ +2  {white} +0 +1 +0$")
    # Refusals: one line each, nothing changed.
    before = await app.tournaments.view(tid)
    for line, answer in [
        (f"twithdraw {tid}", r"^This tournament is over or closed to entries\.$"),
        (f"tpause {tid}", r"^Only an arena can be paused\.$"),
        ("tjoin", r"^Usage: tjoin <id> \[password\]$"),
        ("tjoin ../../etc", r'^"\.\./\.\./etc": There is no such tournament\.$'),
        ("tstandings NoSuchOne1", r"^There is no such tournament\.$"),
        ("tourneys someday", r"^Usage: tourneys \[created\|started\|finished\]$"),
    ]:
        await bob.send(line)
        await bob.expect(answer)
    assert await app.tournaments.view(tid) == before


async def test_an_ics_player_pauses_and_resumes_an_arena_entry(start_app: StartApp) -> None:
    app = await start_app(ics=True)
    settings = TournamentSettings(
        name="Spartan hour",
        format="arena",
        variant="spartan",
        control=Fischer(180_000, 2_000),
        start_at_ms=4_000_000_000_000,  # far ahead: the arena waits the whole test
        duration_ms=3_600_000,
        bots=False,
        password_hash=None,
    )
    tid = await app.tournaments.create(None, settings, password="sesame")
    dave = await IcsClient.registered(app, "dave")
    await dave.send("tourneys created")
    await dave.expect(rf"^{tid} +arena +created +3 2 rated spartan +PB Spartan hour$")
    await dave.send(f"tjoin {tid} open")
    await dave.expect(r"^Wrong tournament password\.$")
    await dave.send(f"tjoin {tid} sesame")
    await dave.expect(rf"^You are in tournament {tid}\.$")
    await dave.send(f"tpause {tid}")
    await dave.expect(rf"^Your entry in tournament {tid} is paused")
    await dave.send(f"tstandings {tid}")
    await dave.expect(r"^Starts: 2096-10-02 07:06 UTC$")
    await dave.expect(r"^ +1  dave +0 +0 +\d+ \(paused\)$")
    await dave.send(f"tjoin {tid}")  # resumes: no password needed for one's own entry
    await dave.expect(rf"^You are in tournament {tid}\.$")
    rows = await app.tournaments.standings(tid)
    assert [(row.name, row.status) for row in rows] == [("dave", "active")]


async def test_tournament_reads_over_the_limit_stop_the_reader_not_another(
    start_app: StartApp,
) -> None:
    app = await start_app(ics=True, review_reads_per_s=0.5, review_reads_burst=2)
    tid = await round_robin(app, "Read table")
    eve = await IcsClient.registered(app, "eve")
    frank = await IcsClient.registered(app, "frank")
    for _ in range(3):
        await eve.send(f"tstandings {tid}")
    await eve.expect(rf"^Tournament {tid}: Read table$")
    await eve.expect(rf"^Tournament {tid}: Read table$")
    await eve.expect(r"^Too many tournament reads; try again in 2 s\.$")
    await eve.send("tourneys")
    await eve.expect(r"^Too many tournament reads; try again in 2 s\.$")
    await frank.send(f"tstandings {tid}")
    await frank.expect(rf"^Tournament {tid}: Read table$")


JUNK_TOKENS = [
    "%s%s%n", "../../etc/passwd", "#" + "Z" * 40, "a" * 33, "NoSuchOne1", "-1", "²", "١٢",
    "'", '"', "\\", "$(reboot)", "<12>", "created", "finished", "\ufeff", "\u200b", "\x1b[2J",
]  # fmt: skip
printable = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00")
junk = st.one_of(
    st.just(""),
    st.text(printable, min_size=1, max_size=40),
    st.sampled_from(JUNK_TOKENS),
    st.lists(st.sampled_from(JUNK_TOKENS), min_size=1, max_size=4).map(" ".join),
)
WORDS = ["tourneys", "tjoin", "twithdraw", "tpause", "tstandings", "tou", "tj", "tw", "tp", "tst"]
lines = st.builds(lambda word, args: f"{word} {args}".strip(), st.sampled_from(WORDS), junk)


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_fuzzed_tournament_commands_change_nothing(
    start_app: StartApp, backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = await start_app(backend, ics=True, **FAST)
    tid = await round_robin(app, "Fuzz table")
    carol = await IcsClient.registered(app, "carol")
    await carol.send(f"tjoin {tid}")
    await carol.expect(rf"^You are in tournament {tid}\.$")
    before = (await app.tournaments.view(tid), await app.tournaments.list())
    drawn = draw_examples(lines, 300)
    # The real id never appears by chance: every join, withdraw and pause names another one.
    assert not any(tid in line for line in drawn)
    with caplog.at_level(logging.WARNING):
        for index in range(0, len(drawn), 50):
            for line in drawn[index : index + 50]:
                await carol.send(line)
            await carol.send(f"help sentinel-{index}")
            await carol.expect(rf'^No help on "sentinel-{index}"\.')
    assert (await app.tournaments.view(tid), await app.tournaments.list()) == before
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    answered = "\n".join(carol.seen)
    assert "There is no such tournament." in answered and "Usage: tjoin" in answered
    assert re.search(rf"^{tid} ", answered, re.M)  # the list was shown too

"""Every ICS argument is checked at the edge (since 0a912b6): a malformed game id, name,
number or a word after a command that takes none is answered in FICS's words and reaches
neither the store nor the hub; nothing is logged as an error."""

from __future__ import annotations

import logging

import pytest
from ics_support import OpenIcs, board_fields, game_of, game_state, play_moves, start_spartan
from ws_support import StartApp


def assert_no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, caplog.text[-3000:]


async def test_bad_arguments_are_answered_in_fics_words(
    start_app: StartApp, ics_guest: OpenIcs, caplog: pytest.LogCaptureFixture
) -> None:
    app = await start_app(ics=True, rate_limit_per_s=1000.0, rate_limit_burst=1000)
    alice, bob, carol = await ics_guest(app), await ics_guest(app), await ics_guest(app)
    number = await start_spartan(alice, bob)
    await play_moves(alice, bob, ["e4", "h7g6"])
    game_id = game_of(app, alice.name)
    before = game_state(app, game_id)
    answers = {
        "smoves %s%s%n": r"^There is no such game\.$",
        "examine ../../etc/passwd": r"^There is no such game\.$",
        "smoves "
        + "a" * 20: r"^There is no such game\.$",  # a hub-sized id longer than stored ones
        "examine #" + "Z" * 33: r"^There is no such game\.$",
        "smoves alice ²": r"^Usage: smoves <name> <history index> \| smoves <game id>$",
        "smoves bad/name 0": r"^'bad/name' is not a valid handle\.$",
        "history %n%n": r"^'%n%n' is not a valid handle\.$",
        "finger " + "x" * 300: r"^'x{40}\.\.\.' is not a valid handle\.$",
        "observe ../1": r"^There is no such game\.$",
        "observe ¹": r"^There is no such game\.$",
        "moves %s": r"^There is no such game\.$",
        "unobserve junk!": r"^There is no such game\.$",
        "seek ² 0": r'^Unknown seek/match term "²"',
        "forward ½": r"^You are not examining a game\.$",
        "help " + "q" * 100: r'^No help on "q{40}\.\.\."\. Type "help" for the commands\.$',
    }
    for line, answer in answers.items():
        await carol.send(line)
        await carol.expect(answer)
    # Words after a command that takes none are not consent: nothing is resigned, offered,
    # aborted or quit.
    refused = {
        "resign now please": r'^You are not playing "now please"\.$',
        "draw junk": r"^Usage: draw$",
        "abort x": r"^Usage: abort$",
        "takeback 99": r"^Usage: takeback$",
        "quit now": r"^Usage: quit$",
        "flag ²": r"^Usage: flag$",
    }
    for line, answer in refused.items():
        await alice.send(line)
        await alice.expect(answer)
    await alice.send("date")  # the sentinel: every line before it was answered
    await alice.expect(r"^Server time - ")
    assert game_state(app, game_id) == before
    (board,) = await play_moves(alice, bob, ["d4"])  # the game goes on
    assert board_fields(board, 8)["pretty"] == "d4"
    await bob.send(f"resign {alice.name}")  # FICS's "resign <opponent>" still resigns
    for client in (alice, bob):
        await client.expect(rf"^\{{Game {number} \(.*\) {bob.name} resigns\}} 1-0$")
    assert_no_errors_logged(caplog)


async def test_gameend_is_taken_quietly(start_app: StartApp, ics_guest: OpenIcs) -> None:
    """XBoard's zippy sends ``gameend`` after each game; FICS answers nothing but the prompt
    (since 6be6928). ``ga`` still means ``games``: the word is matched whole."""
    app = await start_app(ics=True)
    client = await ics_guest(app)
    for line in ("gameend", "$gameend", "gameend 1-0"):
        await client.send(line)
    await client.send("ga")
    await client.expect(r"^  0 games displayed\.$")
    seen = client.seen[: client.pos]
    start = seen.index("Style 12 set.") + 1
    assert [line for line in seen[start:] if line.strip()] == ["  0 games displayed."], seen


# XBoard 4.9's patterns (backend.c, read_from_ics) for its seek graph, which it keeps with
# "$iset seekremove 1" and "$set seek 1": a new ad is
#   "* (*) seeking * * * * *\"play *\" to respond)\n"  (handle, rating, base, inc, rated, type)
# a withdrawn one "\nAds removed: *\n" (numbers separated by spaces), a "sought" line
#   "%d %s %s %d %d unrated %s" (number, rating, handle, base, inc, type), the list's end
#   "* ads displayed".
XBOARD_AD = (
    r'^(\S+) \((\S+)\) seeking (\d+) (\d+) (rated|unrated) (\S+) .*"play (\d+)" to respond\)$'
)
XBOARD_REMOVED = r"^Ads removed: (\d+(?: \d+)*)$"
XBOARD_SOUGHT = r"^\s*(\d+) (\S+) (\S+)\s+(\d+)\s+(\d+) (rated|unrated) (\S+)"


async def test_seekremove_and_seekinfo_say_what_fics_says(
    start_app: StartApp, ics_guest: OpenIcs
) -> None:
    """With ``iset seekremove 1`` a withdrawn or taken seek is announced as
    ``Ads removed: N`` (XBoard drops the dot from its seek graph), with ``iset seekinfo 1`` as
    ``<sr> N``; new seeks come as XBoard's parser reads them."""
    app = await start_app(ics=True)
    viewer, info, bob, carol = [await ics_guest(app) for _ in range(4)]
    for line in ("iset seekremove 1", "set seek 1"):  # what XBoard sends on logging in
        await viewer.send(line)
    await viewer.expect(r"^seek set\.$")
    # Values other than 0/1 (on/off …) are refused and change nothing (since 1027e08).
    for line in ("iset seekremove 2", "set seek 7"):
        await viewer.send(line)
        name = line.split()[1]
        await viewer.expect(rf"^Bad value given for variable {name}: it is 0 or 1\.$")
    await info.send("iset seekinfo 1")
    await info.expect(r"^<sc>$")
    await bob.send("seek 5 0 spartan")
    seek = (await bob.expect(r"^Your seek has been posted with index (\d+)\.$")).group(1)
    ad = await viewer.expect(XBOARD_AD)
    assert ad.groups() == (bob.name, "++++", "5", "0", "unrated", "spartan", seek)
    await info.expect(rf"^<s> {seek} w={bob.name} ")
    await viewer.send("sought")
    listed = await viewer.expect(XBOARD_SOUGHT)
    # the handle with its title, as FICS lists it (a guest: "(U)")
    assert listed.groups() == (seek, "++++", f"{bob.name}(U)", "5", "0", "unrated", "spartan")
    await bob.send("unseek")
    assert (await viewer.expect(XBOARD_REMOVED)).group(1) == seek
    await info.expect(rf"^<sr> {seek}$")
    # A seek taken by another player goes the same way.
    await bob.send("seek 3 0 minishogi")
    taken = (await bob.expect(r"^Your seek has been posted with index (\d+)\.$")).group(1)
    assert (await viewer.expect(XBOARD_AD)).group(7) == taken
    await carol.send(f"play {taken}")
    assert (await viewer.expect(XBOARD_REMOVED)).group(1) == taken
    await info.expect(rf"^<sr> {taken}$")
    await viewer.send(f"play {taken}")
    await viewer.expect(r"^That seek is not available\.$")
    # With seekremove off (the default), no removal lines: the sentinel comes first.
    await viewer.send("iset seekremove 0")
    await bob.board()
    await bob.send("resign")
    await bob.expect(r"^\{Game \d+ .* resigns\} ")
    await bob.send("seek 7 0 spartan")
    gone = (await bob.expect(r"^Your seek has been posted with index (\d+)\.$")).group(1)
    await viewer.expect(rf'"play {gone}" to respond\)$')
    await bob.send("unseek")
    await info.expect(rf"^<sr> {gone}$")
    await viewer.send("help sentinel")
    await viewer.expect(r'^No help on "sentinel"')
    assert not [line for line in viewer.seen if line.startswith(f"Ads removed: {gone}")]


async def test_dai_shogi_boards_are_diagrams_unless_style_12_is_asked_for(
    start_app: StartApp, ics_guest: OpenIcs
) -> None:
    """XBoard 4.9.1 reads at most 199 characters of a style-12 line and a
    15×15 board is 239, so Dai Shogi boards come as a text diagram (seen from the viewer's
    side, pieces by their abbreviations); ``iset wide12 1`` asks for style 12 anyway."""
    app = await start_app(ics=True)
    alice, bob, carol = [await ics_guest(app) for _ in range(3)]
    await alice.send("seek 10 0 daishogi white")
    seek = (await alice.expect(r"^Your seek has been posted with index (\d+)\.$")).group(1)
    await bob.send(f"play {seek}")
    creating = r"^\{Game (\d+) \(.* Creating unrated daishogi match\.\}$"
    number = (await alice.expect(creating)).group(1)
    players = rf"Game {number} \({alice.name} vs\. {bob.name}\) daishogi"
    for client in (alice, bob):
        await client.expect(rf"^{players}, move 1: sente \({alice.name}\) to move; last move none$")
    sente_files = "    " + "".join(f"{chr(ord('a') + f):>4}" for f in range(15))
    back_rank = "   L   N  SG   I   C   S   G   K   G   S   C   I  SG   N   L"
    await alice.expect(rf"^{sente_files}$")
    await alice.expect(rf"^ 15 {back_rank.lower()}  15$")
    await alice.expect(r"^  5 " + "   P" * 15 + "  5$")
    await alice.expect(rf"^  1 {back_rank}  1$")
    await alice.expect(
        rf"^sente {alice.name} \(upper case\) 10:00, gote {bob.name} \(lower case\) 10:00$"
    )
    # Bob (gote) sees the board from his side: rank 1 on top, file o on the left.
    await bob.expect(r"^    " + "".join(f"{chr(ord('o') - f):>4}" for f in range(15)) + "$")
    await bob.expect(rf"^  1 {back_rank}  1$")
    await alice.send("h5h6")
    await alice.expect(r"^Game \d+ .* move 1: gote .* to move; last move h5h6$")
    await alice.expect(
        r"^  6    \.   \.   \.   \.  GB   \.   \.   P   \.   \.  GB   \.   \.   \.   \.  6$"
    )
    await carol.send(f"observe {number}")
    await carol.expect(rf"^You are now observing game {number}\.$")
    await carol.expect(r"^Game \d+ .* gote .* to move; last move h5h6$")
    await carol.send("iset wide12 1")
    await carol.expect(r"^wide12 set\.$")
    await carol.send("refresh")
    fields = (await carol.expect(r"^<12> ")).string.split()
    assert all(len(rank) == 15 for rank in fields[1:16]) and fields[16] == "B", fields
    # No style-12 line reached the players: the sentinel comes first.
    for client in (alice, bob):
        await client.send("help sentinel")
        await client.expect(r'^No help on "sentinel"')
        assert not [line for line in client.seen if line.startswith("<12>")], client.seen


async def test_sought_all_and_refresh_of_a_game_as_on_fics(
    start_app: StartApp, ics_guest: OpenIcs
) -> None:
    app = await start_app(ics=True)
    alice, bob = await ics_guest(app), await ics_guest(app)
    number = await start_spartan(alice, bob)
    await alice.send("sought all")
    await alice.expect(r"^0 ads displayed\.$")
    await alice.send("sought everything")
    await alice.expect(r"^Usage: sought \[all\]$")
    await alice.send(f"refresh {number}")
    assert board_fields(await alice.board(), 8)["game"] == str(number)
    for line in (f"refresh {number + 1}", "refresh x", f"refresh {number} x"):
        await alice.send(line)
        await alice.expect(r"^There is no such game\.$")


async def test_observe_of_a_finished_game_says_it_is_over(
    start_app: StartApp, ics_guest: OpenIcs
) -> None:
    """``observe N`` of a game that has ended (its room still in memory)
    says so and where to read it, and follows nothing: no live board, nothing to unobserve."""
    app = await start_app(ics=True)
    alice, bob, carol = [await ics_guest(app) for _ in range(3)]
    number = await start_spartan(alice, bob)
    game_id = game_of(app, alice.name)
    await alice.send("resign")
    await bob.expect(r"^\{Game \d+ .* resigns\} 0-1$")
    # Still held: the case that was mishandled before 1027e08.
    assert app.hub.room(game_id) is not None
    await carol.send(f"observe {number}")
    await carol.expect(
        rf'^Game {number} is over \(0-1\); "smoves #{game_id}" lists its moves, '
        rf'"examine #{game_id}" steps through them\.$'
    )
    await carol.send("unobserve")
    await carol.expect(r"^You are not observing any games\.$")
    assert not [line for line in carol.seen if line.startswith(("<12>", "You are now observing"))]
    await carol.send(f"smoves #{game_id}")
    await carol.expect(r"^Movelist for game \d+:$")  # what the line points to answers


async def test_adjourn_is_answered_with_a_sentence(start_app: StartApp, ics_guest: OpenIcs) -> None:
    """XBoard's F7 sends ``adjourn``; it is answered (games are not adjourned
    here, and why), not taken for an unknown command, and the game goes on."""
    app = await start_app(ics=True)
    alice, bob = await ics_guest(app), await ics_guest(app)
    await start_spartan(alice, bob)
    game_id = game_of(app, alice.name)
    await alice.send("adjourn")
    await alice.expect(r"^Games are not adjourned on this server: a game goes on while you are away\.")
    await alice.send("help adjourn")
    await alice.expect(r"^adjourn  -- games are not adjourned here")
    room = app.hub.room(game_id)
    assert room is not None and room.status == "started"

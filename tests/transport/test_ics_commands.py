"""ICS commands over raw TCP: logins, limits, challenges, offers, chat, stored games, lists."""

from __future__ import annotations

import asyncio

import pytest
from ics_support import IcsClient, OpenIcs, board_fields, play_moves, start_spartan
from support import wait_until
from ws_support import StartApp


async def test_registered_login_and_failed_passwords(start_app: StartApp) -> None:
    app = await start_app(ics=True)
    await app.accounts.register("alice", "correct horse")
    client = await IcsClient.open(app.ics_port)
    try:
        await client.send("alice")
        await client.expect(r'^If "alice" is your registered name, type the password\.')
        await client.send("wrong horse")
        await client.expect(r"^\*\*\*\* Invalid password! \*\*\*\*$")
        await client.expect(r"^login:")
        await client.send("alice")
        await client.send("correct horse")
        await client.expect(r"^\*\*\*\* Starting FICS session as alice \*\*\*\*$")
        await client.send("finger")
        await client.expect(r"^alice is online\.")
    finally:
        await client.close()
    intruder = await IcsClient.open(app.ics_port)
    try:
        for _ in range(5):
            await intruder.send("alice")
            await intruder.send("guess")
        await intruder.expect(r"^Disconnected: too many failed logins\.")
        with pytest.raises(ConnectionError):
            await intruder.expect(r"never")
    finally:
        await intruder.close()


async def test_floods_and_long_lines_are_refused(start_app: StartApp, ics_guest: OpenIcs) -> None:
    # (A refill rate this low adds no token while the test runs, however slow the machine.)
    app = await start_app(ics=True, rate_limit_per_s=0.01, rate_limit_burst=4)
    client = await ics_guest(app)  # its three login lines used 3 of the burst of 4
    await client.send("x" * 5000)
    await client.expect(r"^Line too long \(more than 1024 characters\); ignored\.")
    await client.send("seek 5 0 spartan")
    await client.expect(r"^Too many commands: at most 0.01 per second; this one was ignored\.")
    await client.send("sought")
    await client.expect(r"^Too many commands")
    assert app.hub.seeks() == []  # the refused seek changed nothing
    for _ in range(10):
        await client.send("date")
    await client.expect(r"^Disconnected: too many commands \(flooding\)\.")


async def test_challenges_are_issued_declined_withdrawn_and_accepted(
    start_app: StartApp, ics_guest: OpenIcs
) -> None:
    app = await start_app(ics=True)
    alice, bob = await ics_guest(app), await ics_guest(app)
    challenge = rf"{alice.name} \(\+\+\+\+\) \[white\] {bob.name} \(\+\+\+\+\) unrated wild/1 3 0\."
    await alice.send(f"match {bob.name} 3 0 wild/1 white")
    await alice.expect(rf"^Issuing: {challenge}$")
    await bob.expect(rf"^Challenge: {challenge}$")
    await bob.send("pending")
    await bob.expect(rf"^ \d+: {alice.name} is offering a challenge: {challenge}$")
    await bob.send("decline")
    await alice.expect(rf"^{bob.name} declines the match offer\.$")
    await alice.send(f"match {bob.name} 3 0 wild/1 white")
    await bob.expect(r"^Challenge: ")
    await alice.send("withdraw")
    await bob.expect(rf"^{alice.name} withdraws the match offer\.$")
    await bob.send("accept")
    await bob.expect(r"^You have no pending offers from other players\.$")
    await alice.send("match nobody-here 3 0")
    await alice.expect(r"^nobody-here is not logged in\.$")
    await alice.send("match " + "z" * 500)
    await alice.expect(r"^z{64}\.\.\. is not logged in\.$")
    await alice.send(f"match {bob.name} 3 0 wild/1 white")
    await bob.expect(r"^Challenge: ")
    await bob.send(f"accept {alice.name}")
    for client in (alice, bob):
        await client.expect(
            rf"^Creating: {alice.name} \(\+\+\+\+\) {bob.name} \(\+\+\+\+\) unrated wild/1 3 0$"
        )
        fields = board_fields(await client.board(), 8)
        assert (fields["white"], fields["initial"], fields["increment"]) == (alice.name, "3", "0")


async def test_abort_takeback_draw_resign_and_chat(start_app: StartApp, ics_guest: OpenIcs) -> None:
    app = await start_app(ics=True)
    alice, bob = await ics_guest(app), await ics_guest(app)
    number = await start_spartan(alice, bob)
    await alice.send("abort")
    for client in (alice, bob):
        await client.expect(rf"^\{{Game {number} \(.*\) Game aborted on move 1 by {alice.name}\}} \*$")
    number = await start_spartan(alice, bob)
    await play_moves(alice, bob, ["e4", "h7g6", "d4"])
    await alice.send("abort")
    await alice.expect(r"^It is too late to abort this game; use \"resign\"\.$")
    await bob.send("takeback")
    await bob.expect(r"^Takeback request sent\.$")
    await alice.expect(rf"^{bob.name} would like to take back a move\.$")
    await alice.send("accept")
    for client in (alice, bob):
        await client.expect(rf"^Game {number}: 2 half move\(s\) taken back\.$")
        fields = board_fields(await client.board(), 8)
        assert (fields["turn"], fields["move_number"]) == ("B", "1")
    bob.writer.write(b"say good\x00luck\r\n")  # a NUL the store could not keep: refused at the edge
    await bob.expect(
        r"^Your line holds a NUL character, which this server does not accept; ignored\.$"
    )
    await bob.send("say good luck")
    await bob.expect(rf"^\(told {alice.name}\)$")
    await alice.expect(rf"^{bob.name} says: good luck$")
    await alice.send(f"tell {bob.name} thanks")
    await bob.expect(rf"^{alice.name} says: thanks$")
    await alice.send("draw")
    await bob.expect(rf"^{alice.name} offers you a draw\.$")
    await bob.send("decline")
    await alice.expect(rf"^{bob.name} declines the draw offer\.$")
    await alice.send("draw")
    await bob.expect(r"offers you a draw\.$")
    await bob.send("accept")
    for client in (alice, bob):
        await client.expect(rf"^\{{Game {number} \(.*\) Game drawn by mutual agreement\}} 1/2-1/2$")
    number = await start_spartan(alice, bob)
    await bob.send("resign")
    for client in (alice, bob):
        await client.expect(rf"^\{{Game {number} \(.*\) {bob.name} resigns\}} 1-0$")
    await alice.send("resign")
    await alice.expect(r"^You are not playing a game\.$")


async def test_history_examine_and_smoves_of_a_stored_game(
    start_app: StartApp, ics_guest: OpenIcs
) -> None:
    app = await start_app(ics=True)
    alice, bob = await ics_guest(app), await ics_guest(app)
    number = await start_spartan(alice, bob)
    await play_moves(alice, bob, ["f3", "Wf6", "g4", "Wh4"])
    await alice.expect(rf"^\{{Game {number} .* checkmated\}} 0-1$")
    await wait_until(lambda: app.driver.pending_writes == 0)
    await alice.send("history")
    entry = await alice.expect(
        rf"^ 0: - \+\+\+\+ W \+\+\+\+ {bob.name}\s+\[spartan u\s+5\s+0\] Mat .* #(\S+)$"
    )
    game_id = entry.group(1)
    await alice.send(f"examine {alice.name} 0")
    await alice.expect(r"^Starting to examine game \d+\.$")
    start = board_fields(await alice.board(), 8)
    assert (start["relation"], start["verbose"], start["move_number"]) == ("2", "none", "1")
    await alice.send("forward 3")
    await alice.expect(r"^Game \d+: now at move 3 of 4\.$")
    third = board_fields(await alice.board(), 8)
    assert (third["pretty"], third["turn"]) == ("g4", "B")
    await alice.send("backward")
    assert board_fields(await alice.board(), 8)["pretty"] == "Wf6"
    await alice.send("revert")
    assert board_fields(await alice.board(), 8)["verbose"] == "none"
    await alice.send("backward")
    await alice.expect(r"^You're at the beginning of the game\.$")
    await alice.send("unexamine")
    await alice.expect(r"^You are no longer examining game \d+\.$")
    await bob.send("iset startpos 1")  # move lists start with the start position (relation -4)
    await bob.send(f"smoves {game_id}")
    await bob.expect(rf"^{alice.name} \(\+\+\+\+\) vs\. {bob.name} \(\+\+\+\+\) --- ")
    await bob.expect(r"^Unrated spartan match, initial time: 5 minutes, increment: 0 seconds\.$")
    start = board_fields(await bob.board(), 8)
    assert (start["relation"], start["board"].split()[0]) == ("-4", "lgkcckwl")
    await bob.expect(rf"^Move  {alice.name}\s+{bob.name}$")
    await bob.expect(r"^  1\.  f3 .*  Wf6 ")
    await bob.expect(r"^  2\.  g4 .*  Wh4# ")
    await bob.expect(rf"^      \{{{alice.name} checkmated\}} 0-1$")
    await bob.send("examine nosuchgame")
    await bob.expect(r"^There is no such game\.$")


async def test_who_finger_help_and_seek_lines(start_app: StartApp, ics_guest: OpenIcs) -> None:
    app = await start_app(ics=True)
    alice, bob = await ics_guest(app), await ics_guest(app)
    await alice.send("who")
    await alice.expect(r"^ Computer\(C\)$")
    await alice.expect(r"^3 players displayed\.$")
    await alice.send(f"finger {bob.name}")
    await alice.expect(rf"^{bob.name} is online \(guest\)\.$")
    await alice.send("help seek")
    await alice.expect(r"^seek \[time inc\]")
    await alice.send("iset seekinfo 1")
    await alice.expect(r"^<sc>$")
    await bob.send("seek 3 0 minishogi manual")
    posted = await bob.expect(r"^Your seek has been posted with index (\d+)\.$")
    seek_id = posted.group(1)
    await alice.expect(
        rf"^<s> {seek_id} w={bob.name} ti=01 rt=0  t=3 i=0 r=u tp=minishogi c=\? rr=0-9999 a=f f=f$"
    )
    await alice.send("sought")
    await alice.expect(rf"^\s*{seek_id} \+\+\+\+ {bob.name}\(U\)\s+3\s+0 unrated minishogi .* m$")
    await alice.expect(r"^1 ad displayed\.$")
    await bob.send("unseek")
    await bob.expect(rf"^Your seek {seek_id} has been removed\.$")
    await alice.expect(rf"^<sr> {seek_id}$")
    await asyncio.wait_for(bob.send("quit"), 5)
    await bob.expect(r"^Logging you out\.$")


async def test_a_computer_command_with_a_digit_int_refuses_gets_a_clear_error(
    start_app: StartApp, ics_guest: OpenIcs
) -> None:
    """``str.isdigit`` takes ``²`` and ``٣``, ``int`` does not: such a word is not a level or a
    time, and the command is refused as bad game terms are; the session goes on."""
    app = await start_app(ics=True)
    client = await ics_guest(app)
    for words, refused in (
        ("\u00b2", "\u00b2"),
        ("\u0663 5 0", "\u0663"),
        ("1 \u00b2 0", "\u00b2"),
    ):
        await client.send(f"computer {words}")
        # Before: "²" failed the command ("could not do that just now"), "٣ 5 0" started a
        # level-3 game. The next line answering is the refusal, not a game's creation.
        answer = await client.expect(r"^(Unknown seek/match term|Creating:|computer:)")
        assert answer.group(0) == "Unknown seek/match term", (words, answer.string)
        assert refused in answer.string
    await client.send("date")
    await client.expect(r"^Server time")
    assert app.hub.running_versions() == {}  # no game started

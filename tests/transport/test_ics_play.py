"""The ICS port with raw TCP clients: telnet players, and telnet with websocket players."""

from __future__ import annotations

from ics_support import IcsClient, OpenIcs, board_fields
from support import wait_until
from ws_support import MINI_FISCHER, OpenClient, StartApp, start_game

from server.app import App


async def pair(app: App, open_ics: OpenIcs, seek: str) -> tuple[IcsClient, IcsClient, int]:
    """Two telnet guests post the same seek and are paired; returns (white, black, game)."""
    alice, bob = await open_ics(app), await open_ics(app)
    await alice.send(seek)
    await alice.expect(r"^Your seek has been posted with index \d+\.")
    await bob.send(seek)
    created = {}
    for client in (alice, bob):
        match = await client.expect(r"^Creating: (\S+) \((\S+)\) (\S+) \((\S+)\) (.*)$")
        created[client.name] = match.groups()
        start = await client.expect(r"^\{Game (\d+) \((\S+) vs\. (\S+)\) Creating (.+) match\.\}$")
    assert created[alice.name] == created[bob.name]
    number = int(start.group(1))
    white = alice if start.group(2) == alice.name else bob
    black = bob if white is alice else alice
    return white, black, number


async def test_two_telnet_players_play_minishogi_to_fourfold_repetition(
    start_app: StartApp, ics_guest: OpenIcs
) -> None:
    app = await start_app("postgresql", ics=True)
    white, black, number = await pair(app, ics_guest, "seek 5 0 minishogi")
    first = board_fields(await white.board(), 5)
    assert first["board"] == "rbsgk ----p ----- P---- KGSBR"
    assert (first["relation"], first["white_time"], first["game"]) == ("1", "300", str(number))
    assert (await black.expect(r"^<b1> ")).string == f"<b1> game {number} white [] black []"
    # Golds step out and back: the start position comes back for the fourth time at ply 12.
    cycle = [(white, "b1b2"), (black, "d5d4"), (white, "b2-b1"), (black, "d4d5")]
    for ply in range(12):
        mover, move = cycle[ply % 4]
        await mover.send(move)
        for client in (white, black):
            fields = board_fields(await client.board(), 5)
            assert fields["verbose"].startswith("G/")
    for client in (white, black):
        end = await client.expect(rf"^\{{Game {number} \((\S+) vs\. (\S+)\) (.*)\}} (\S+)$")
        # Mini-Shogi: sennichite loses for the first player (sente).
        assert end.group(3) == f"{white.name} loses by repetition"
        assert end.group(4) == "0-1"
    await wait_until(lambda: app.driver.pending_writes == 0)  # the end is written after it is shown
    stored = (await app.store.list_games(player_name=white.name)).games[0]
    assert (stored.result, stored.termination, stored.plies) == ("0-1", "repetition", 12)


async def test_telnet_spartan_game_in_san_to_mate(start_app: StartApp, ics_guest: OpenIcs) -> None:
    app = await start_app(ics=True)
    white, black, number = await pair(app, ics_guest, "seek 5 0 spartan")
    for client in (white, black):
        assert board_fields(await client.board(), 8)["verbose"] == "none"
    for mover, move, pretty in [(white, "f3", "f3"), (black, "Wf6", "Wf6"), (white, "g4", "g4"),
                                (black, "Wh4", "Wh4#")]:  # fmt: skip
        await mover.send(move)
        for client in (white, black):
            fields = board_fields(await client.board(), 8)
            assert fields["pretty"] == pretty
    last = fields["board"].split()
    assert last[4] == "------Pw"  # the warlord on h4, next to the advanced g-pawn
    for client in (white, black):
        end = await client.expect(rf"^\{{Game {number} ")
        assert end.string.endswith(f"{white.name} checkmated}} 0-1")
    game = (await app.store.list_games(player_name=black.name)).games[0]
    stored = await app.store.get_game(game.id)
    assert stored is not None
    assert [m.uci for m in stored.moves] == ["f2f3", "g8f6", "g2g4", "f6h4"]


async def test_websocket_and_telnet_players_play_each_other(
    start_app: StartApp, open_client: OpenClient, ics_guest: OpenIcs
) -> None:
    app = await start_app(ics=True)
    web = await open_client(app, "web")
    await web.guest()
    telnet = await ics_guest(app)
    await telnet.send("set seekinfo 1")
    await telnet.expect(r"^<sc>$")
    posted = await web.ok("seek", {"variant": "minishogi", "tc": MINI_FISCHER, "colour": "second"})
    seek = await telnet.expect(rf"^<s> {posted['seek']} w=(\S+) .* tp=minishogi c=B ")
    assert seek.group(1) == web.player["name"]  # type: ignore[index]
    await telnet.send(f"play {posted['seek']}")
    await telnet.expect(r"^Creating: ")
    fields = board_fields(await telnet.board(), 5)
    assert fields["relation"] == "1" and fields["white"] == telnet.name
    start = await web.next("game_start")
    game_id = start["d"]["game"]
    # Mate in four for the second player (the websocket one).
    moves = [(telnet, "a1b2"), (web, "a5a2"), (telnet, "b2c3"), (web, "d5c4")]
    for ply, (mover, move) in enumerate(moves, start=1):
        if mover is web:
            await web.ok("move", {"game": game_id, "ply": ply, "move": move})
        else:
            await telnet.send(move)
        event = await web.next(lambda m, p=ply: m["t"] == "move" and m["d"]["ply"] == p)
        fields = board_fields(await telnet.board(), 5)
        assert fields["pretty"] == event["d"]["uci"]
    end = await web.next("end")
    assert end["d"]["result"] == "0-1"
    line = await telnet.expect(r"^\{Game \d+ ")
    assert line.string.endswith(f"{telnet.name} checkmated}} 0-1")


async def test_telnet_observer_follows_a_websocket_game(
    start_app: StartApp, open_client: OpenClient, ics_guest: OpenIcs
) -> None:
    app = await start_app(ics=True)
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.guest()
    await bob.guest()
    game = await start_game(alice, bob, "wildcastle")
    await game.play(game.legal[0])
    watcher = await ics_guest(app)
    await watcher.send("games")
    listed = await watcher.expect(r"^\s*(\d+) \+\+\+\+ (\S+) .*\[wild/1 u\s+1\s+0\]")
    number = listed.group(1)
    await watcher.send(f"observe {number}")
    await watcher.expect(rf"^You are now observing game {number}\.")
    fields = board_fields(await watcher.board(), 8)
    assert fields["relation"] == "0" and fields["move_number"] == "1" and fields["turn"] == "B"
    assert fields["white"] == game.first.player["name"]  # type: ignore[index]
    assert fields["board"].split() == _board_of(game.fen)
    for _ in range(3):
        event = await game.play(game.legal[0])
        fields = board_fields(await watcher.board(), 8)
        assert fields["pretty"] == event["d"]["display"]
        assert fields["board"].split() == _board_of(game.fen)
    await watcher.send("kibitz hello players")
    await watcher.expect(r"^\(kibitzed\)")
    await game.first.ok("resign", {"game": game.id})
    line = await watcher.expect(rf"^\{{Game {number} ")
    assert line.string.endswith("resigns} 0-1")
    await watcher.expect(rf"^Removing game {number} from observation list\.")


def _board_of(fen: str) -> list[str]:
    rows = []
    for row in fen.split()[0].split("/"):
        text = ""
        for char in row:
            text += "-" * int(char) if char.isdigit() else char
        rows.append(text)
    return rows

"""User text at every door (since af38a67, 2026-12-06): control characters, line breaks and
bidirectional overrides are refused at the edge (``server.hub.user_text``), and the ICS renderer
writes whatever it is given as one visible line, so nobody forges a server line.

Each test has the attacker and an honest client beside it: the honest chat line, move or tell
arrives, and nothing forged arrives before it (the sentinel)."""

from __future__ import annotations

import aiohttp
from fuzz_values import CONTROL_CHARACTERS, draw_examples
from hypothesis import strategies as st
from ics_support import IcsClient, OpenIcs
from ws_support import Client, Game, OpenClient, StartApp, start_game

from server.app import App
from server.hub.commands import ChatCommand
from server.hub.user_text import forbidden_character

FORGED = "hi\r\n{Game 1 (a vs. b) b resigns} 1-0\r\n<12> rnbqkbnr pppppppp - - - - - - W -1"
"""The attack the rule was made for: a chat line that ends the line and writes a game end and
a board."""

ESCAPES = [
    "\x1b[2J",  # clear the screen
    "\x1b]0;pwned\x07",  # set the window title (OSC … BEL)
    "bye\rlogin: ",  # back to the start of the line, a fake login prompt
    "tab\there",
    "next\x85line",  # C1 NEL
    "para\u2029graph",
    "spoof\u202eevil",  # right-to-left override
]


def _forged(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("{Game", "<12>", "login:"))]


async def _watched_game(
    app: App, open_client: OpenClient, ics_guest: OpenIcs
) -> tuple[Game, Client, IcsClient]:
    """A Spartan game of two websocket guests, a websocket guest ``spy`` in its room and an
    ICS guest observing it (its first board read)."""
    first, second, spectator = [await open_client(app, n) for n in ("first", "second", "spy")]
    for client in (first, second, spectator):
        await client.guest()
    game = await start_game(first, second, "spartan")
    observer = await ics_guest(app)
    await observer.send(f"observe {game.first.player['name']}")  # type: ignore[index]
    await observer.expect(r"^You are now observing game \d+\.$")
    await observer.board()
    await spectator.ok("join", {"game": game.id})
    return game, spectator, observer


async def test_a_spectators_chat_cannot_forge_ics_lines(
    start_app: StartApp, open_client: OpenClient, ics_guest: OpenIcs
) -> None:
    app = await start_app(ics=True)
    game, spectator, observer = await _watched_game(app, open_client, ics_guest)
    watched_from = observer.pos
    for text in [FORGED, *ESCAPES]:
        answer = await spectator.request("chat", {"game": game.id, "text": text})
        assert answer["t"] == "error" and answer["d"]["code"] == "bad_request", answer
        assert "'text' must not contain control characters (U+" in answer["d"]["message"]
    await spectator.ok("chat", {"game": game.id, "text": "honest line"})
    await observer.expect(r"^spy\S*\[\d+\] kibitzes: honest line$|kibitzes: honest line$")
    assert _forged(observer.seen[watched_from:]) == [], observer.seen[watched_from:]
    await game.play(game.legal[0])  # the players are served as ever
    await observer.board()
    # Defence in depth: text that got past every edge (stored before the check, say) is
    # written as one line, its control characters replaced.
    conn = app.hub.state.players[spectator.player["id"]].conns[0]  # type: ignore[index]
    app.driver.handle(conn, ChatCommand(game.id, FORGED))
    line = await observer.expect(r"kibitzes: hi")
    assert line.string.endswith("kibitzes: hi\ufffd\ufffd{Game 1 (a vs. b) b resigns} 1-0\ufffd\ufffd"
                                "<12> rnbqkbnr pppppppp - - - - - - W -1")  # fmt: skip
    await observer.send("help sentinel")
    await observer.expect(r'^No help on "sentinel"')
    assert not [line for line in observer.seen[watched_from:] if line.startswith("{Game")]


async def test_escape_codes_are_refused_in_tells_names_and_token_descriptions(
    start_app: StartApp, open_client: OpenClient, ics_guest: OpenIcs
) -> None:
    app = await start_app(ics=True)
    alice, bob = await ics_guest(app), await ics_guest(app)
    for text in ESCAPES[:2] + ESCAPES[4:]:  # CR and TAB: the line reader's own (below)
        alice.writer.write(f"tell {bob.name} {text}\r\n".encode())
        await alice.expect(r"^Your line holds a control character \(U\+[0-9A-F]{4}\), which")
    alice.writer.write(f"tell {bob.name} a\tb\r\n".encode())
    await alice.expect(r"^Your line holds a control character \(U\+0009\)")
    await alice.send(f"tell {bob.name} honest")
    await bob.expect(rf"^{alice.name} tells you: honest$")
    assert not [line for line in bob.seen if "\x1b" in line or "pwned" in line], bob.seen
    # Registration names, token descriptions: refused, nothing stored.
    ws = await open_client(app)
    answer = await ws.register("evil\x1b[2J")
    assert answer["t"] == "error" and "control characters" in answer["d"]["message"], answer
    assert await app.store.player_by_name("evil\x1b[2J") is None
    await app.accounts.register("carol", "correct horse")
    async with aiohttp.ClientSession() as http:
        for text in ESCAPES:
            form = {"name": "carol", "password": "correct horse", "description": f"x{text}y"}
            async with http.post(f"http://127.0.0.1:{app.port}/api/token", data=form) as reply:
                assert reply.status == 400, await reply.text()
                assert (
                    "description: must not contain control characters"
                    in (await reply.json())["error"]
                )
        form = {"name": "carol", "password": "correct horse", "description": "my bot"}
        async with http.post(f"http://127.0.0.1:{app.port}/api/token", data=form) as reply:
            assert reply.status == 200
        async with http.post(f"http://127.0.0.1:{app.port}/api/token/list", data=form) as reply:
            listed = (await reply.json())["tokens"]
    assert [token["description"] for token in listed] == ["my bot"]


async def test_decline_reasons_and_names_in_commands_are_user_text(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    alice: Client = await open_client(app, "alice")
    bob: Client = await open_client(app, "bob")
    for client in (alice, bob):
        await client.guest()
    tc = {"kind": "fischer", "base_s": 60, "inc_s": 0}
    sent = await alice.ok("match", {"to": bob.player["name"], "variant": "spartan", "tc": tc})  # type: ignore[index]
    challenge = sent["challenge"]
    for text in ESCAPES:
        answer = await bob.request("decline", {"id": challenge, "reason": text})
        assert answer["t"] == "error" and "'reason' must not contain" in answer["d"]["message"]
        answer = await alice.request("match", {"to": f"bob{text}", "variant": "spartan", "tc": tc})
        assert answer["t"] == "error" and "'to' must not contain" in answer["d"]["message"]
    await bob.ok(
        "decline", {"id": challenge, "reason": "later, thanks"}
    )  # still open: declined now


async def test_any_chat_text_is_refused_or_reaches_an_ics_observer_as_one_line(
    start_app: StartApp, open_client: OpenClient, ics_guest: OpenIcs
) -> None:
    """Hypothesis at the websocket's chat door: every text is either refused (and nothing reaches
    the observer) or reaches the ICS observer whole, on one line, with no control character."""
    texts = draw_examples(
        st.text(st.characters(blacklist_categories=("Cs",)) | CONTROL_CHARACTERS, max_size=24),
        80,
    )
    app = await start_app(ics=True, rate_limit_per_s=1000.0, rate_limit_burst=1000)
    game, spectator, observer = await _watched_game(app, open_client, ics_guest)
    shown: list[str] = []
    for text in texts:
        answer = await spectator.request("chat", {"game": game.id, "text": text})
        if answer["t"] == "error":
            assert answer["d"]["code"] in ("bad_request", "empty_message"), answer
            assert forbidden_character(text) >= 0 or not text.strip() or len(text) > 300
        else:
            assert forbidden_character(text) == -1
            shown.append(text.strip())
    await spectator.ok("chat", {"game": game.id, "text": "the end"})
    await observer.expect(r"kibitzes: the end$")
    assert 10 < len(shown) < len(texts) - 10, shown  # both kinds were drawn
    said = [line.split(" kibitzes: ", 1)[1] for line in observer.seen if " kibitzes: " in line]
    assert said == [*shown, "the end"]
    await game.play(game.legal[0])  # the players were served throughout

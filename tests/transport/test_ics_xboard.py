"""Debian's XBoard on the ICS port: a zippy computer player with Fairy-Max plays a whole Spartan
game against a scripted player; XBoard displays a Wild Castle game and a Mini-Shogi game with
its hands (checked on the window title, which XBoard builds from our lines, and on a
measured screenshot; ``ICS_SCREENSHOTS=docs/images`` keeps them for docs/ics.md)."""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

from support import wait_until
from ws_support import Client, OpenClient, StartApp, alice_and_bobby, start_game
from xboard_support import (
    FAIRYMAX,
    RecordingProxy,
    XBoard,
    logged_in,
    require_programs,
    settled_board,
    squares_across,
    window_titled,
    xboard_options,
    xvfb,
)

# The shortest clock the server accepts (MIN_FISCHER_BASE_S): Fairy-Max budgets its thinking
# from its clock, so its moves (and the whole game) take a quarter of what a minute would; any
# ending (mate, a flag, a draw) is a whole game for this test.
SPARTAN_BLITZ = {"kind": "fischer", "base_s": 15, "inc_s": 0}
MAX_PLIES = 300
LIGHT, DARK = "#E8C87A", "#3F7F5F"
SUPPRESS_TIP = ["-messageSuppress", "Right-clicking menu item or dialog text pops up help on it"]
#: Mini-Shogi on XBoard's shogi board: the options docs/ics.md gives.
MINISHOGI_XBOARD = xboard_options("minishogi")
#: Still boards for the screenshots: no move animation, no last-move frames or arrows.
STILL = [
    "-animateMoving",
    "false",
    "-highlightLastMove",
    "false",
    "-highlightMoveWithArrow",
    "false",
]
BOARD_COLOURS = [*SUPPRESS_TIP, *STILL, "-useBoardTexture", "false", "-lightSquareColor", LIGHT, "-darkSquareColor", DARK,
                 "-size", "49"]  # fmt: skip
_XBOARD_MOVE = re.compile(r"^(?:[a-h][1-8][a-h][1-8](?:=[a-z])?|o-o(?:-o)?)$")


async def challenge_until_accepted(player: Client, target: str, colour: str) -> str:
    """Challenge ``target`` to Spartan Chess until it accepts (a zippy whose engine is still
    starting declines at once, so each retry follows a decline); returns the game id."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while loop.time() < deadline:
        answer = await player.ok(
            "match",
            {"to": target, "variant": "spartan", "tc": SPARTAN_BLITZ, "colour": colour},
        )
        outcome = await player.next(
            lambda m, c=answer["challenge"]: (
                m["t"] in ("challenge_accepted", "challenge_declined") and m["d"]["id"] == c
            ),
            timeout=30,
        )
        if outcome["t"] == "challenge_accepted":
            return str(outcome["d"]["game"])
    raise AssertionError("the zippy player never accepted")


async def play_until_end(player: Client, game_id: str, side: str, rng: random.Random) -> Any:
    """Random legal moves for ``side`` until the game ends (resigning after MAX_PLIES)."""
    while True:
        message = await player.next(
            lambda m: m["t"] in ("game", "move", "end") and m["d"].get("game") == game_id,
            timeout=60,
        )
        data = message["d"]
        if message["t"] == "end":
            return data
        if data["turn"] != side or not data["legal"]:
            continue
        ply = data["ply"] + 1
        if ply > MAX_PLIES:
            await player.ok("resign", {"game": game_id})
            continue
        await player.ok("move", {"game": game_id, "ply": ply, "move": rng.choice(data["legal"])})


async def test_xboard_zippy_with_fairymax_plays_a_whole_spartan_game(
    start_app: StartApp, open_client: OpenClient, tmp_path: Path
) -> None:
    require_programs()
    # Each retried challenge costs XBoard two lines ("tell" and "decline"): lift the flood
    # limit, which is not what this test is about.
    app = await start_app(ics=True, rate_limit_per_s=1000.0, rate_limit_burst=1000)
    await app.accounts.register("zippy", "zippy-password")
    proxy = RecordingProxy(app.ics_port)
    await proxy.start()
    # Pondering off: Fairy-Max 5.0b hangs on zippy's "name"/"rating" while it ponders.
    options = ["-zp", "-zippyVariants", "normal,spartan", "-fcp", FAIRYMAX, "-xponder"]
    async with xvfb() as display:
        xboard = XBoard(display, tmp_path, proxy.port, ["zippy", "zippy-password"], options)
        await xboard.start()
        try:
            await proxy.wait_sent("style 12")  # logged in, interface set up
            player = await open_client(app, "scripted")
            await player.guest()
            game_id = await challenge_until_accepted(player, "zippy", "first")
            accepted_at = await proxy.wait_sent("accept")
            end = await play_until_end(player, game_id, "first", random.Random(20251125))
            # XBoard never ends a game itself: it read our "{Game N …} result" line when its
            # zippy sends its game-end command ("gameend").
            await proxy.wait_sent("gameend")
        finally:
            await xboard.stop()
            await proxy.close()
    assert end["result"] in ("1-0", "0-1", "1/2-1/2"), end
    await wait_until(lambda: app.driver.pending_writes == 0)
    stored = await app.store.get_game(game_id)
    assert stored is not None and stored.result == end["result"]
    assert stored.termination == end["termination"]
    sent = [line.lstrip("$") for line in proxy.sent[accepted_at + 1 :]]
    xboard_moves = [line.replace("=", "") for line in sent if _XBOARD_MOVE.match(line)]
    stored_moves = [move.uci for move in stored.moves]
    assert xboard_moves == stored_moves[1::2], xboard.log()
    assert len(stored_moves) >= 2


async def observe_in_xboard(
    app: Any, tmp_path: Path, display: str, watched: str, options: list[str]
) -> tuple[XBoard, RecordingProxy]:
    """XBoard logged in as a registered viewer, observing ``watched``'s game (flat square
    colours, so that the screenshot can be measured)."""
    await app.accounts.register("viewer", "viewer-password")
    logon = ["viewer", "viewer-password", f"observe {watched}"]
    return await logged_in(display, tmp_path, app.ics_port, logon, [*BOARD_COLOURS, *options])


async def test_xboard_displays_a_wild_castle_game(
    start_app: StartApp, open_client: OpenClient, tmp_path: Path
) -> None:
    require_programs()
    app = await start_app(ics=True)
    alice, bob = await alice_and_bobby(app, open_client)
    game = await start_game(alice, bob, "wildcastle", colour="first")
    for _ in range(4):  # the a-pawns and a rook: ranks 5 and 6 stay empty
        await game.play(next(m for m in game.legal if m[0] == "a"))
    async with xvfb() as display:
        xboard, proxy = await observe_in_xboard(app, tmp_path, display, "alice", [])
        try:
            # Observing, XBoard asks for the move list; its header names the variant.
            await proxy.wait_sent("moves")
            await game.play(next(m for m in game.legal if m[0] == "b"))
            # The next board's title says what XBoard made of it: Wild Castle (its variant 2).
            title = await window_titled(display, r"alice.*bobby.*(w2|wildcastle)")
            image = tmp_path / "xboard-wild1.png"
            x, y, width, height = await settled_board(display, image, DARK)
        finally:
            await xboard.stop()
            await proxy.close()
    assert "{1 0" in title, title  # 1 minute, no increment
    assert abs(width - height) <= 4 and width >= 8 * 8, (x, y, width, height)
    assert await squares_across(image, LIGHT, DARK, 2.5 / 8) == 8  # rank 6: empty
    assert "as variant wildcastle" in xboard.log(full=True)
    _keep(image, "xboard-wild1.png")


async def test_xboard_displays_a_minishogi_game_with_its_hands(
    start_app: StartApp, open_client: OpenClient, tmp_path: Path
) -> None:
    require_programs()
    app = await start_app(ics=True)
    alice, bob = await alice_and_bobby(app, open_client)
    game = await start_game(alice, bob, "minishogi", colour="first")
    for move in ("a1b2", "a5a2", "b2a2"):  # the rook takes a pawn, the king takes the rook
        await game.play(move)
    async with xvfb() as display:
        xboard, proxy = await observe_in_xboard(app, tmp_path, display, "alice", MINISHOGI_XBOARD)
        try:
            await proxy.wait_sent("moves")  # the move list's header says "minishogi"
            await game.play("e5d4")
            # XBoard titles a game with holdings by the players and their hands (<b1> lines):
            # "[R-P] alice-bobby" in its small layout, "alice [R] vs. bobby [P]" otherwise.
            title = await window_titled(
                display, r"^(\[R-P\] alice-bobby|alice \[R\] vs\. bobby \[P\])$"
            )
            image = tmp_path / "xboard-minishogi.png"
            x, y, width, height = await settled_board(display, image, DARK)
        finally:
            await xboard.stop()
            await proxy.close()
    assert title in ("[R-P] alice-bobby", "alice [R] vs. bobby [P]")
    assert abs(width - height) <= 4 and width >= 5 * 8, (x, y, width, height)
    assert await squares_across(image, LIGHT, DARK, 2.5 / 5) == 5  # rank 3: empty
    log = xboard.log(full=True)
    assert "as variant shogi" in log and "load 5x5 board" in log
    _keep(image, "xboard-minishogi.png")


def _keep(image: Path, name: str) -> None:
    """Copy a screenshot to ``$ICS_SCREENSHOTS`` when set (``ICS_SCREENSHOTS=docs/images``
    refreshes the pictures in docs/ics.md); a test run leaves the sources alone otherwise."""
    target = os.environ.get("ICS_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(image, Path(target) / name)

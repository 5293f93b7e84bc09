"""Debian's XBoard on the ICS port: a zippy computer player with Fairy-Max plays a whole Spartan
game against a scripted player; XBoard displays a Wild Castle game and a Mini-Shogi game with
its hands (checked on the window title, which XBoard builds from our lines, and on a
screenshot, kept in ``docs/images/``)."""

from __future__ import annotations

import asyncio
import random
import re
import shutil
from pathlib import Path
from typing import Any

from ws_support import Client, OpenClient, StartApp, wait_for
from xboard_support import (
    FAIRYMAX,
    RecordingProxy,
    XBoard,
    require_programs,
    xvfb,
)

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
SPARTAN_BLITZ = {"kind": "fischer", "base_s": 60, "inc_s": 0}
MAX_PLIES = 300
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
    app = await start_app(ics=True)
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
    await wait_for(lambda: app.driver.pending_writes == 0)
    stored = await app.store.get_game(game_id)
    assert stored is not None and stored.result == end["result"]
    assert stored.termination == end["termination"]
    sent = [line.lstrip("$") for line in proxy.sent[accepted_at + 1 :]]
    xboard_moves = [line.replace("=", "") for line in sent if _XBOARD_MOVE.match(line)]
    stored_moves = [move.uci for move in stored.moves]
    assert xboard_moves == stored_moves[1::2], xboard.log()
    assert len(stored_moves) >= 2


def _keep(image: Path, name: str) -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(image, IMAGES / name)

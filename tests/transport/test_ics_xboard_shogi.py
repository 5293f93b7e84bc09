"""XBoard 4.9 on the ICS port: it plays Mini-Shogi and Sho Shogi with the command lines of
docs/ics.md (6ad7ee3): a registered player in XBoard accepts a challenge from a web
player, makes its moves by clicking on XBoard's board (XBoard writes them to the ICS), the web
player answers; every move is stored, and XBoard's debug log holds no parse error. It follows a
Dai Shogi game as text (e47d9d1), and its seek graph drops a withdrawn seek (aa76a9f)."""

from __future__ import annotations

import asyncio
import math
import os
import re
from pathlib import Path
from typing import Any

from ics_support import OpenIcs
from support import wait_until
from ws_support import Client, OpenClient, StartApp, start_game
from xboard_support import (
    DARK,
    FLAT,
    LIGHT,
    RecordingProxy,
    XBoard,
    colour_box,
    require_programs,
    screenshot,
    settled_board,
    xboard_options,
    xvfb,
)

TC = {"kind": "fischer", "base_s": 300, "inc_s": 0}


async def click_squares(display: str, box: tuple[int, int, int, int], files: int, ranks: int,
                        squares: list[str]) -> None:  # fmt: skip
    """Click the centres of ``squares`` (``a1`` …) on a board seen from the first player."""
    x, y, width, height = box
    env = {**os.environ, "DISPLAY": display}
    args: list[str] = []
    for square in squares:
        file, rank = ord(square[0]) - ord("a"), int(square[1:]) - 1
        cx = x + int((file + 0.5) * width / files)
        cy = y + int((ranks - rank - 0.5) * height / ranks)
        args += ["mousemove", str(cx), str(cy), "click", "1"]
    process = await asyncio.create_subprocess_exec("xdotool", *args, env=env)
    assert await asyncio.wait_for(process.wait(), 30) == 0


async def sent_after(proxy: RecordingProxy, start: int, pattern: str) -> tuple[int, str]:
    """The first line XBoard sent after index ``start`` that matches ``pattern``."""
    regex = re.compile(pattern)

    def found() -> int | None:
        return next((i for i in range(start, len(proxy.sent)) if regex.search(proxy.sent[i])), None)

    await wait_until(lambda: found() is not None, timeout=30)
    index = found()
    assert index is not None
    return index, proxy.sent[index]


def boards_parsed(xboard: XBoard) -> int:
    """How many style-12 boards XBoard has read (its debug log says so for each)."""
    return xboard.log(full=True).count("Parsing board:")


async def square_has_piece(image: Path, box: tuple[int, int, int, int], files: int, ranks: int,
                           square: str) -> bool:  # fmt: skip
    """Whether XBoard drew something on ``square`` (the middle of a flat-coloured square holds
    pixels of other colours only where a piece is drawn)."""
    x, y, width, height = box
    file, rank = ord(square[0]) - ord("a"), int(square[1:]) - 1
    size = width // files
    left = x + file * width // files + size // 4
    top = y + (ranks - 1 - rank) * height // ranks + size // 4
    process = await asyncio.create_subprocess_exec(
        "convert", str(image), "-crop", f"{size // 2}x{size // 2}+{left}+{top}", "+repage",
        "txt:-", stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(process.communicate(), 30)
    colours = re.findall(r"#([0-9A-Fa-f]{6})", out.decode())
    assert colours, f"nothing cropped at {square}"
    return any("#" + c.upper() not in (LIGHT, DARK) for c in colours)


PARSE_ERRORS = re.compile(r"Failed to parse|[Cc]ouldn't parse|[Ii]llegal move|[Ee]rror")


async def play_in_xboard(
    app: Any, bob: Client, tmp_path: Path, variant: str, plies: list[str], files: int,
    ranks: int, look: dict[int, list[str]] | None = None,
) -> tuple[str, XBoard, RecordingProxy, dict[int, dict[str, bool]]]:  # fmt: skip
    """XBoard (alice, the first player, with docs/ics.md's options) and ``bob`` play
    ``plies``; XBoard's moves are clicked on its board. ``look``: after which ply to look at
    which squares (whether XBoard drew a piece there). Returns the game id, XBoard (stopped),
    the proxy and what was seen."""
    await app.accounts.register("alice", "alice-password")
    proxy = RecordingProxy(app.ics_port)
    await proxy.start()
    seen: dict[int, dict[str, bool]] = {}
    async with xvfb() as display:
        xboard = XBoard(display, tmp_path, proxy.port, ["alice", "alice-password"],
                        [*FLAT, *xboard_options(variant)])  # fmt: skip
        await xboard.start()
        try:
            await proxy.wait_sent("style 12")
            await bob.ok("match", {"to": "alice", "variant": variant, "tc": TC, "colour": "second"})
            challenge = len(proxy.sent)
            assert xboard.process is not None and xboard.process.stdin is not None
            xboard.process.stdin.write(b"accept\n")
            await xboard.process.stdin.drain()
            await sent_after(proxy, challenge, r"accept")
            start = await bob.next(lambda m: m["t"] == "game" and m["d"]["variant"] == variant)
            game_id = start["d"]["game"]
            image = tmp_path / f"{variant}.png"
            await wait_until(lambda: boards_parsed(xboard) >= 1, timeout=30)
            box = await settled_board(display, image, DARK)
            for ply, move in enumerate(plies, start=1):
                if ply % 2 == 1:
                    mark = len(proxy.sent)
                    await click_squares(display, box, files, ranks, [move[:2], move[2:4]])
                    _, line = await sent_after(proxy, mark, r"^\$?[a-i][1-9][a-i][1-9]")
                    assert line.lstrip("$").startswith(move[:4]), (line, move, xboard.log())
                else:
                    await bob.ok("move", {"game": game_id, "ply": ply, "move": move})
                await wait_until(lambda p=ply: boards_parsed(xboard) >= p + 1, timeout=30)
                if look and ply in look:
                    await settled_board(display, image, DARK)
                    seen[ply] = {
                        square: await square_has_piece(image, box, files, ranks, square)
                        for square in look[ply]
                    }
        finally:
            await xboard.stop()
            await proxy.close()
    return game_id, xboard, proxy, seen


async def check_stored(app: Any, game_id: str, plies: list[str], xboard: XBoard) -> None:
    await wait_until(lambda: app.driver.pending_writes == 0)
    stored = await app.store.get_game(game_id)
    assert stored is not None
    assert [m.uci for m in stored.moves] == plies, xboard.log()
    log = xboard.log(full=True)
    problems = [line for line in log.splitlines() if PARSE_ERRORS.search(line)]
    assert not problems, problems


async def xboard_plays(
    start_app: StartApp, open_client: OpenClient, tmp_path: Path, variant: str,
    plies: list[str], size: int, look: dict[int, list[str]] | None = None,
) -> tuple[XBoard, dict[int, dict[str, bool]]]:  # fmt: skip
    """XBoard and a web player play ``plies`` of ``variant``; every move is stored and
    XBoard's log holds no parse error. Returns XBoard (stopped) and what was seen."""
    require_programs()
    app = await start_app(ics=True)
    bob = await open_client(app, "bob")
    await bob.register("bobby")
    game_id, xboard, _, seen = await play_in_xboard(
        app, bob, tmp_path, variant, plies, size, size, look
    )
    await check_stored(app, game_id, plies, xboard)
    return xboard, seen


async def test_xboard_plays_minishogi(
    start_app: StartApp, open_client: OpenClient, tmp_path: Path
) -> None:
    # Silver and gold step forward (XBoard moves them as its shogi silver and gold), the rook
    # takes a pawn into the hand (the <b1> line), the king steps.
    plies = ["c1c2", "e4e3", "b1b2", "e3e2", "e1e2", "e5d4", "a1b1"]
    xboard, _ = await xboard_plays(start_app, open_client, tmp_path, "minishogi", plies, 5)
    assert "load 5x5 board" in xboard.log(full=True)


async def test_xboard_plays_sho_shogi_and_shows_every_piece(
    start_app: StartApp, open_client: OpenClient, tmp_path: Path
) -> None:
    # The bishops open their diagonals; bob's bishop takes alice's and promotes (a horse, our
    # letter H); alice's silver takes it back; the Drunk Elephants (E) stand on e2 and e8.
    plies = ["c3c4", "g7g6", "i3i4", "h8b2+", "c1b2", "a7a6", "e2d2"]
    look = {4: ["e2", "e8", "b2", "e5"]}
    _, seen = await xboard_plays(start_app, open_client, tmp_path, "shoshogi", plies, 9, look)
    # Every piece is drawn (without the docs' piece table XBoard leaves E and promoted pieces
    # out); an empty square stays empty.
    assert seen[4] == {"e2": True, "e8": True, "b2": True, "e5": False}, seen


async def test_xboard_follows_a_dai_shogi_game_as_text(
    start_app: StartApp, open_client: OpenClient, tmp_path: Path
) -> None:
    """XBoard 4.9.1 cannot read a 15×15 style-12 line (its reader stops at
    199 characters), so it gets Dai Shogi boards as a text diagram in its console: no board
    reaches its board parser, none fails."""
    require_programs()
    app = await start_app(ics=True)
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bobby")
    game = await start_game(alice, bob, "daishogi", colour="first")
    await app.accounts.register("viewer", "viewer-password")
    proxy = RecordingProxy(app.ics_port)
    await proxy.start()
    async with xvfb() as display:
        logon = ["viewer", "viewer-password", "observe alice"]
        xboard = XBoard(display, tmp_path, proxy.port, logon, FLAT)
        await xboard.start()
        try:
            await proxy.wait_sent("observe alice")
            await game.play("h5h6")
            await wait_until(lambda: "last move h5h6" in xboard.log(full=True), timeout=30)
            await game.play("h11h10")
            await wait_until(lambda: "last move h11h10" in xboard.log(full=True), timeout=30)
        finally:
            await xboard.stop()
            await proxy.close()
    log = xboard.log(full=True)
    assert boards_parsed(xboard) == 0, log[-3000:]
    problems = [line for line in log.splitlines() if PARSE_ERRORS.search(line)]
    assert not problems, problems


def seek_dot(box: tuple[int, int, int, int], minutes: int) -> tuple[int, int]:
    """Where XBoard 4.9 plots an unrated-player's unrated, non-chess seek of ``minutes`` + 0
    on its seek graph (backend.c, PlotSeekAd: a logarithmic time axis over the board's
    width, the unrated row just above the bottom margin, wild variants 6 pixels right)."""
    x, y, width, height = box
    square = 49
    left, top = x - 1, y - 1  # the board's outer line gap
    w, h = width + 2, height + 2
    h_margin, v_margin = 10, 20
    dot_x = int((w - h_margin - square / 8 - 7) * math.log(minutes) / math.log(95.0)) + h_margin
    dot_y = h - 1 - (v_margin + square // 4)
    return left + dot_x + 6, top + dot_y


async def click_at(display: str, point: tuple[int, int]) -> None:
    env = {**os.environ, "DISPLAY": display}
    process = await asyncio.create_subprocess_exec(
        "xdotool", "mousemove", str(point[0]), str(point[1]), "click", "1", env=env
    )
    assert await asyncio.wait_for(process.wait(), 30) == 0


async def graph_up(display: str, image: Path) -> None:
    """Wait until the seek graph covers the board (no dark square left on the screen)."""
    for _ in range(50):
        await screenshot(display, image)
        if await colour_box(image, DARK) is None:
            return
    raise AssertionError("XBoard never showed its seek graph")


async def test_xboard_seek_graph_drops_a_withdrawn_seek(
    start_app: StartApp, ics_guest: OpenIcs, tmp_path: Path
) -> None:
    """``iset seekremove`` in XBoard: its seek graph (``-seekGraph true -autoRefresh true``
    makes it send ``iset seekremove 1``) shows two seeks; one is withdrawn, and a click where
    its dot was plays nothing; a click on the other dot plays that seek."""
    require_programs()
    app = await start_app(ics=True)
    await app.accounts.register("viewer", "viewer-password")
    bob, carol = await ics_guest(app), await ics_guest(app)
    proxy = RecordingProxy(app.ics_port)
    await proxy.start()
    options = [*FLAT, "-seekGraph", "true", "-autoRefresh", "true"]
    async with xvfb() as display:
        xboard = XBoard(display, tmp_path, proxy.port, ["viewer", "viewer-password"], options)
        await xboard.start()
        try:
            await proxy.wait_sent("seekremove")
            await proxy.wait_sent("style 12")
            seeks = {}
            for client, minutes in ((bob, 5), (carol, 60)):
                await client.send(f"seek {minutes} 0 spartan")
                posted = await client.expect(r"^Your seek has been posted with index (\d+)\.$")
                seeks[minutes] = posted.group(1)
            image = tmp_path / "graph.png"
            box = await settled_board(display, image, DARK)
            await click_at(display, (box[0] + box[2] // 2, box[1] + box[3] // 2))
            await proxy.wait_sent("sought")
            await graph_up(display, image)
            await bob.send("unseek")
            await bob.expect(r"^Your seek \d+ has been removed\.$")
            await wait_until(
                lambda: f"Ads removed: {seeks[5]}" in xboard.log(full=True), timeout=30
            )
            mark = len(proxy.sent)
            await click_at(display, seek_dot(box, 5))  # where bob's dot was: the graph closes
            await settled_board(display, image, DARK)
            await click_at(display, (box[0] + box[2] // 2, box[1] + box[3] // 2))
            await sent_after(proxy, mark, r"sought")
            await graph_up(display, image)
            await click_at(display, seek_dot(box, 60))
            _, played = await sent_after(proxy, mark, r"play \d+")
        finally:
            await xboard.stop()
            await proxy.close()
    assert played.lstrip("$") == f"play {seeks[60]}", proxy.sent[mark:]
    assert f"play {seeks[5]}" not in [line.lstrip("$") for line in proxy.sent], proxy.sent

"""XBoard logging in during a game of its player's (a reconnect) draws that game (since
4d4fcc7): the board used to come at login, before XBoard's setup (``iset ms 1``, ``style 12``)
and without FICS's ``{Game N (a vs. b) Continuing … match.}``, so XBoard drew a Spartan game as
ordinary chess, most of the Spartan army missing, with its clocks in seconds. Now the game is
shown after the setup, continuation line first: in Spartan Chess and in Mini-Shogi (with its
hands; docs/ics.md's options), XBoard draws a piece on exactly the squares the position has
one, and reads the clocks in milliseconds. (Wild Castle is XBoard's wild/1 and Sho Shogi its
shogi board: both take the same path; Dai Shogi's boards are text.)"""

from __future__ import annotations

import re
from pathlib import Path

from support import wait_until
from ws_support import OpenClient, StartApp, alice_and_bobby, start_game
from xboard_support import (
    DARK,
    FLAT,
    LIGHT,
    XBoard,
    logged_in,
    occupied_squares,
    require_programs,
    settled_board,
    window_titled,
    xboard_options,
    xvfb,
)

from server.rules import Position, get_variant

TC = {"kind": "fischer", "base_s": 300, "inc_s": 0}
STILL = ["-highlightMoveWithArrow", "false"]


def pieces_at(variant: str, fen: str) -> set[str]:
    """The squares of ``fen`` holding a piece."""
    v = get_variant(variant)
    position = Position.from_fen(v, fen)
    return {v.geometry.name(square) for square, piece in enumerate(position.board) if piece}


def boards(xboard: XBoard) -> list[str]:
    """The style-12 boards XBoard parsed, in order (its debug log)."""
    return re.findall(r"Parsing board: (.*)", xboard.log(full=True))


async def test_xboard_logging_in_mid_game_draws_spartan_and_minishogi_games(
    start_app: StartApp, open_client: OpenClient, tmp_path: Path
) -> None:
    require_programs()
    app = await start_app(ics=True)
    alice, bob = await alice_and_bobby(app, open_client)
    seen: dict[str, tuple[set[str], set[str], str, str]] = {}
    async with xvfb() as display:
        for variant, moves, options in (
            ("spartan", ["e2e4", "f7h5", "d1h5"], []),  # the queen takes a hoplite
            # the rook takes a pawn, the king takes the rook: a hand each
            ("minishogi", ["a1b2", "a5a2", "b2a2"], xboard_options("minishogi")),
        ):
            game = await start_game(alice, bob, variant, tc=TC, colour="first")
            for move in moves:
                await game.play(move)
            workdir = tmp_path / variant
            workdir.mkdir()
            logon = ["alice", "correct horse"]
            xboard, proxy = await logged_in(
                display, workdir, app.ics_port, logon, [*FLAT, *STILL, *options]
            )
            try:
                await proxy.wait_sent("style 12")
                await wait_until(lambda xboard=xboard: len(boards(xboard)) >= 1, timeout=30)
                if variant == "minishogi":  # the title shows the hands (<b1> lines)
                    await window_titled(
                        display, r"^(\[R-P\] alice-bobby|alice \[R\] vs\. bobby \[P\])$"
                    )
                image = tmp_path / f"{variant}.png"
                box = await settled_board(display, image, DARK)
                v = get_variant(variant)
                drawn = await occupied_squares(
                    image, box, v.geometry.files, v.geometry.ranks, LIGHT, DARK
                )
                seen[variant] = (
                    drawn,
                    pieces_at(variant, game.fen),
                    boards(xboard)[0],
                    xboard.log(full=True),
                )
            finally:
                await xboard.stop()
                await proxy.close()
            await alice.ok("resign", {"game": game.id})
            await game.end()
    for variant, (drawn, expected, first_board, log) in seen.items():
        assert drawn == expected, (variant, sorted(drawn ^ expected), log[-3000:])
        # the clocks in milliseconds: XBoard's setup (iset ms 1) came before the board
        ranks = get_variant(variant).geometry.ranks
        times = first_board.split()[ranks + 15 : ranks + 17]  # the ranks, then 15 fields
        assert all(int(t) > 1000 for t in times), first_board
        continuing = log.find("Continuing unrated")
        assert 0 <= continuing < log.find("Parsing board:"), log[-3000:]
    assert "as variant spartan" in seen["spartan"][3]

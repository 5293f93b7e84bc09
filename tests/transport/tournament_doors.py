"""The players of the whole-tournament tests, one per door (docs/tournaments.md, "Proof"): a
websocket player, a bot driven by berserk (unmodified), an ICS client. Who wins is fixed: the
computer beats everyone, then the name that sorts first wins; the loser resigns."""

from __future__ import annotations

import asyncio

from bot_support import Bot, StreamReader, call
from ics_support import IcsClient
from ws_support import Client, Msg

GAMES_EACH = 4
"""A round robin of five: five rounds, each entrant plays four games and sits one out."""
ORDER = ["Computer", "ann", "bea", "cyd", "dov"]
"""Who beats whom: the computer beats everyone, then the name that sorts first wins."""
WAIT_S = 60.0
"""Longest wait for one's next game (the others' games and the computer's moves first)."""


def human_winner(white: str, black: str) -> str:
    """Between two humans the name that sorts first wins."""
    return min(white, black)


async def ws_player(
    client: Client,
    name: str,
    games: int | None = GAMES_EACH,
    resume: str | None = None,
    hold: tuple[int, asyncio.Event] | None = None,
) -> None:
    """Plays its games (``None``: until cancelled): against the computer it waits for one
    engine move, then resigns. ``resume``: first the game running at login (``hello.game``).
    ``hold`` (n, event): at its n-th game the player sets ``event`` and plays no more."""
    if resume is not None:
        await client.send("join", {"game": resume})
        snapshot = await client.next(lambda m: m["t"] == "game" and m["d"]["game"] == resume)
        await finish_resumed(client, name, snapshot)
    while games is None or games > 0:
        games = None if games is None else games - 1
        start = await client.next(
            lambda m: m["t"] == "game_start" and "tournament" in m["d"], timeout=WAIT_S
        )
        game, side = start["d"]["game"], start["d"]["side"]
        if hold is not None:
            hold = (hold[0] - 1, hold[1])
            if hold[0] == 0:
                hold[1].set()
                await asyncio.Event().wait()  # until cancelled
        opponent = start["d"]["opponent"]
        if opponent.get("computer"):
            snapshot = await client.next(lambda m, g=game: m["t"] == "game" and m["d"]["game"] == g)
            if snapshot["d"]["turn"] == side:
                move = sorted(snapshot["d"]["legal"])[0]
                await client.send("move", {"game": game, "ply": 1, "move": move})
            await client.next(
                lambda m, g=game, s=side: (
                    m["t"] == "move" and m["d"]["game"] == g and m["d"]["side"] != s
                ),
                timeout=WAIT_S,
            )
            await client.send("resign", {"game": game})
        elif human_winner(name, opponent["name"]) != name:
            await client.send("resign", {"game": game})
        await client.next(lambda m, g=game: m["t"] == "end" and m["d"]["game"] == g)


async def finish_resumed(client: Client, name: str, snapshot: Msg) -> None:
    """A game found running after a restart: the loser resigns at once; both see its end."""
    data = snapshot["d"]
    game, role = data["game"], data["role"]
    opponent = data["players"]["second" if role == "first" else "first"]
    if opponent.get("computer") or human_winner(name, opponent["name"]) != name:
        await client.send("resign", {"game": game})
    if data["status"] == "started":
        await client.next(lambda m: m["t"] == "end" and m["d"]["game"] == game, timeout=WAIT_S)


async def bot_player(bot: Bot, events: StreamReader, games: int | None = GAMES_EACH) -> None:
    """A berserk bot: resigns to the computer and to the names before its own."""
    while games is None or games > 0:
        games = None if games is None else games - 1
        start = (await asyncio.wait_for(events.next("gameStart"), WAIT_S))["game"]
        game, opponent = start["gameId"], start["opponent"]["username"]
        if opponent == "Computer" or human_winner(bot.name, opponent) != bot.name:
            await call(bot.client.bots.resign_game, game)
        await events.next(lambda e, g=game: e.get("type") == "gameFinish" and e["game"]["id"] == g)


async def ics_player(client: IcsClient, name: str, games: int | None = GAMES_EACH) -> None:
    """An ICS client: each pairing arrives as a match (``Creating``; after a restart the game
    running at login as ``Continuing``); it resigns where it loses."""
    while games is None or games > 0:
        games = None if games is None else games - 1
        created = await client.expect(
            r"^\{Game (\d+) \((\w+) vs\. (\w+)\) (?:Creating|Continuing) unrated wild/1 match\.\}$",
            WAIT_S,
        )
        number, white, black = created.groups()
        opponent = black if white == name else white
        if opponent == "Computer" or human_winner(name, opponent) != name:
            await client.send("resign")
        await client.expect(rf"^\{{Game {number} \({white} vs\. {black}\) .*\}} (1-0|0-1)$", WAIT_S)

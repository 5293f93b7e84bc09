"""The ``who`` listing through the real server: registered players and guests, idle and playing."""

from __future__ import annotations

from support import wait_until
from ws_support import OpenClient, StartApp, start_game


async def test_who_lists_connected_players_and_their_games(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b, c = [await open_client(app, name) for name in "abc"]
    await a.register("Alice")
    await b.guest()
    await c.guest()
    game = await start_game(a, b)
    listing = await c.request("who")
    assert listing["t"] == "who"
    players = {p["id"]: p for p in listing["d"]["players"]}
    # the computer is always online (server/app/computer.py), marked as such
    assert set(players) == {a.player["id"], b.player["id"], c.player["id"], "computer"}
    assert players["computer"]["computer"] is True and players["computer"]["name"] == "Computer"
    alice = players[a.player["id"]]
    assert alice["name"] == "Alice" and alice["guest"] is False and alice["game"] == game.id
    assert players[b.player["id"]]["guest"] is True
    assert players[b.player["id"]]["game"] == game.id
    assert players[c.player["id"]] == {**c.player, "ratings": {}, "game": None}
    await a.close()
    await wait_until(lambda: not app.hub.online(a.player["id"]))
    listing = await c.request("who")
    assert a.player["id"] not in {p["id"] for p in listing["d"]["players"]}

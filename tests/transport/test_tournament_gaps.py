"""Tournament games on a live app (gaps closed by e169f55 and 529ae68): a berserk stored when
made survives a restart (the resumed game's clock and the result's berserk mark); no takeback or
rematch offer in a tournament game."""

from __future__ import annotations

from typing import Any

from tournament_players import registered
from ws_support import OpenClient, StartApp


async def test_a_berserk_survives_a_restart(
    start_app: StartApp, open_client: OpenClient, tmp_path: Any
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'berserk.sqlite3'}"
    first = await start_app(database_url=url)
    bza, bzb = await registered(open_client, first, ["bza", "bzb"])
    tc = {"kind": "fischer", "base_s": 60, "inc_s": 2}
    answer = await bza.ok(
        "tournament_create",
        {
            "name": "Berserk cup",
            "variant": "wildcastle",
            "tc": tc,
            "format": "arena",
            "duration_s": 600,
            "start_when_joined": 2,
        },
    )
    tid = answer["tournament"]
    for client in (bza, bzb):
        await client.ok("tournament_join", {"id": tid})
    start = await bza.next(lambda m: m["t"] == "game_start")
    game, side = start["d"]["game"], start["d"]["side"]
    await bza.ok("berserk", {"game": game})
    stored = await first.store.get_game(game)
    assert stored is not None and (stored.first_berserk, stored.second_berserk) == (
        side == "first",
        side == "second",
    )
    # Takebacks and rematches are refused in a tournament game (the game goes on).
    taken = await bza.request("takeback_offer", {"game": game})
    assert taken["t"] == "error" and taken["d"]["code"] == "takeback_tournament"
    await first.stop()
    second = await start_app(database_url=url, journal_dir=first.settings.journal_dir)
    again = await open_client(second, "bza2")
    await again.login("bza")
    assert again.hello is not None and again.hello["d"]["game"] == game
    await again.send("join", {"game": game})
    view = await again.next(lambda m: m["t"] == "game" and m["d"]["game"] == game)
    assert view["d"]["clocks"][side]["ms"] == 30_000  # still halved
    other = "second" if side == "first" else "first"
    assert view["d"]["clocks"][other]["ms"] == 60_000
    loser = await open_client(second, "bzb2")
    await loser.login("bzb")
    await loser.send("join", {"game": game})
    await loser.next(lambda m: m["t"] == "game" and m["d"]["game"] == game)
    await loser.ok("resign", {"game": game})
    rematch = await loser.request("rematch_offer", {"game": game})
    assert rematch["t"] == "error" and rematch["d"]["code"] == "rematch_tournament"
    await again.ok("tournament_watch", {"id": tid})
    pushed = await again.next(
        lambda m: (
            m["t"] == "tournament_standings"
            and sum(row["games"] for row in m["d"]["standings"]) == 2
        )
    )
    rows = {row["name"]: row for row in pushed["d"]["standings"]}
    assert rows["bza"]["berserks"] == 1 and rows["bza"]["score"] == 2

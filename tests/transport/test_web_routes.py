"""The web client's HTTP routes: its page routes answer index.html, the catalogue is served."""

from __future__ import annotations

import json

from test_transport_limits import get
from ws_support import StartApp

from server.rules import VARIANTS


async def test_page_routes_serve_the_client_and_nothing_else(start_app: StartApp) -> None:
    app = await start_app()
    _, _, index = await get(app, "/")
    for path in ("/game/u8jzPde0", "/review", "/player/alice", "/tournaments", "/tournament/Xy12ab34"):
        status, headers, body = await get(app, path)
        assert status == 200 and headers["Content-Type"].startswith("text/html"), path
        assert body == index
    for path in ("/game/", "/game/a/b", "/player/", "/games/x", "/reviews", "/tournament/", "/tournament/a/b"):
        assert (await get(app, path))[0] == 404, path


async def test_the_variant_catalogue_comes_from_the_rules(start_app: StartApp) -> None:
    app = await start_app()
    status, headers, body = await get(app, "/api/variants")
    assert status == 200 and headers["Content-Type"] == "application/json"
    variants = {v["name"]: v for v in json.loads(body)["variants"]}
    assert set(variants) == set(VARIANTS)
    dai = variants["daishogi"]
    assert (dai["files"], dai["ranks"]) == (15, 15)
    assert len(dai["pieces"]) == len(VARIANTS["daishogi"].pieces)
    lion = next(p for p in dai["pieces"] if p["symbol"] == "L!")
    assert lion["name"] == "Lion" and lion["kanji"] == "獅子" and len(lion["lion"]) == 8
    # A promoted Kirin bears the name of what it moves as.
    assert next(p for p in dai["pieces"] if p["symbol"] == "+O")["kanji"] == "獅子"
    pawn = next(p for p in variants["minishogi"]["pieces"] if p["symbol"] == "P")
    assert pawn["kanji"] == "歩" and pawn["atoms"] == [
        {"dx": 0, "dy": 1, "min": 1, "max": 1, "jump": False, "move": True,
         "capture": True, "initial": False}
    ]
    assert variants["spartan"]["draw_offers"] is True
    assert variants["minishogi"]["drops"] is True and variants["shoshogi"]["drops"] is False
    assert all(p["kanji"] is None for p in variants["wildcastle"]["pieces"])

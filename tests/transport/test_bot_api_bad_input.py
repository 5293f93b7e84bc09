"""Bad input on every Bot API endpoint (hypothesis, against the live server): wrong or missing
tokens, other people's games and challenges, illegal and malformed moves, odd bodies and huge
bodies (a reader that stops reading: the queue's bound here, the live proof in
``test_bot_api_slow_reader.py``). Each gets a clear ``{"error": …}`` (never a 5xx), nothing
changes (the game goes on from where it was: a sentinel move arrives as the very next state),
and the bot's streams stay up.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
from bot_support import base_url, call, make_bot, new_token
from fuzz_frames import draw_examples
from hypothesis import strategies as st
from ws_support import OpenClient, StartApp

from server.transport.http_api.app import MAX_BODY_BYTES
from server.transport.http_api.link import MAX_QUEUED, NdjsonStream

FISCHER = {"kind": "fischer", "base_s": 600, "inc_s": 0}
REQUESTS = 300
FAST = {"rate_limit_per_s": 100_000.0, "rate_limit_burst": 100_000}

PATHS = [
    ("GET", "/api/account"),
    ("GET", "/api/account/playing"),
    ("POST", "/api/bot/account/upgrade"),
    ("GET", "/api/user/{name}"),
    ("GET", "/api/bot/game/stream/{game}"),
    ("POST", "/api/bot/game/{game}/move/{move}"),
    ("POST", "/api/bot/game/{game}/chat"),
    ("POST", "/api/bot/game/{game}/abort"),
    ("POST", "/api/bot/game/{game}/resign"),
    ("POST", "/api/bot/game/{game}/draw/{yesno}"),
    ("POST", "/api/bot/game/{game}/takeback/{yesno}"),
    ("POST", "/api/challenge/{name}"),
    ("POST", "/api/challenge/{challenge}/accept"),
    ("POST", "/api/challenge/{challenge}/decline"),
    ("POST", "/api/challenge/{challenge}/cancel"),
    ("POST", "/api/token"),
    ("DELETE", "/api/token/{challenge}"),
    ("GET", "/game/export/{game}"),
]

text = st.text(min_size=0, max_size=40)
segment = st.one_of(
    text.filter(lambda s: s not in ("", ".", "..")).map(lambda s: quote(s, safe="")),
    st.sampled_from(["GAME", "OTHER", "nogame12", "0", "-1", "99999999999999999999", "%00"]),
)
move = st.one_of(
    st.sampled_from(["a1a1", "z9z9", "a5a4", "P@c3", "@@@@", "a1b2,b2c3", "e2e4", "a1"]),
    text.filter(lambda s: s not in ("", ".", "..")).map(lambda s: quote(s, safe="")),
)
auth = st.sampled_from(["none", "garbage", "vhb_garbage", "other", "human", "revoked", "bot"])
body = st.one_of(
    st.none(),
    st.binary(max_size=200),
    st.dictionaries(
        st.sampled_from(
            [
                "room",
                "text",
                "reason",
                "clock.limit",
                "color",
                "variant",
                "rated",
                "clock.byoyomi",
                "x",
            ]
        ),
        text,
        max_size=5,
    ),
    st.just(b"x" * (MAX_BODY_BYTES + 10)),
    st.just(b'{"text": ' * 200),
)
request = st.tuples(st.sampled_from(PATHS), segment, move, auth, body, st.booleans())


async def test_fuzzed_requests_get_clear_errors_and_change_nothing(
    start_app: StartApp, open_client: OpenClient, caplog: pytest.LogCaptureFixture
) -> None:
    app = await start_app(**FAST)
    bot = await make_bot(app, open_client, "robo")
    other = await make_bot(app, open_client, "tron")
    revoked = await new_token(app, "robo")
    async with (
        aiohttp.ClientSession() as http,
        http.delete(
            f"{base_url(app)}/api/token", headers={"Authorization": f"Bearer {revoked}"}
        ) as answer,
    ):
        assert answer.status == 204
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    answer = await human.ok(
        "match", {"to": "robo", "variant": "minishogi", "tc": FISCHER, "colour": "first"}
    )
    challenge = await events.next("challenge")
    await call(bot.client.bots.accept_challenge, challenge["challenge"]["id"])
    game_id = (await events.next("gameStart"))["game"]["gameId"]
    stream = await bot.game(game_id)
    await stream.next("gameFull")
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a1b2"})
    await stream.next(lambda e: e["type"] == "gameState" and e["moves"] == "a1b2")
    tokens = {
        "garbage": "not-a-token",
        "vhb_garbage": "vhb_" + "x" * 43,
        "other": other.token,
        "human": human.token,
        "revoked": revoked,
        "bot": bot.token,
    }
    samples = draw_examples(request, REQUESTS)
    caplog.set_level(logging.ERROR)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15)) as http:
        for (method, template), seg, uci, who, payload, as_json in samples:
            path = template.format(
                name=seg,
                game=game_id if seg == "GAME" else seg,
                move=uci,
                yesno=seg if len(seg) > 3 else "yes",
                challenge=seg,
            )
            if "/game/stream/" in path and seg == "GAME":
                continue  # a second game stream is fine, not bad input
            headers = {} if who == "none" else {"Authorization": f"Bearer {tokens[who]}"}
            kwargs: dict[str, Any] = {"headers": headers}
            if isinstance(payload, dict):
                kwargs["json" if as_json else "data"] = payload
            elif payload is not None:
                kwargs["data"] = payload
            async with http.request(method, base_url(app) + path, **kwargs) as answer:
                raw = await answer.read()
                shown = f"{method} {path} as {who}: {answer.status} {raw[:200]!r}"
                assert answer.status < 500 or answer.status == 503, shown
                if answer.status >= 400:
                    assert (await answer.json(content_type=None))["error"], shown
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    # Nothing changed: the game is where it was; the bot's move is the very next state.
    await call(bot.client.bots.make_move, game_id, "a5a2")
    state = await stream.next("gameState")
    assert state["moves"] == "a1b2 a5a2" and state["status"] == "started", state
    # And the event stream is still up: a new challenge arrives on it.
    await human.ok("resign", {"game": game_id})
    await events.next("gameFinish")
    await human.ok("match", {"to": "robo", "variant": "minishogi", "tc": FISCHER})
    assert (await events.next("challenge"))["challenge"]["challenger"]["name"] == "alice"


async def test_a_stream_that_falls_behind_by_its_bound_is_dropped() -> None:
    """The queue between the hub's messages and a stream's writer is bounded: a line beyond
    :data:`MAX_QUEUED` unwritten ones drops the stream (at once: ``on_drop``, which the writer
    sets to abort its connection), and nothing more is kept for it. A unit check of the queue
    alone; the live server with a socket that is never read: ``test_bot_api_slow_reader.py``."""
    stream = NdjsonStream()
    cut: list[bool] = []
    stream.on_drop = lambda: cut.append(True)
    for number in range(MAX_QUEUED):
        stream.send({"type": "n", "n": number})
    assert not stream.dropped
    stream.send({"type": "one too many"})
    assert stream.dropped and cut == [True]
    stream.send({"type": "ignored"})
    assert await stream.next_line() is None  # the writer stops at once
    assert cut == [True]  # cut off once

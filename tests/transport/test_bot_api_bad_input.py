"""Bad input on every Bot API endpoint (hypothesis, against the live server): wrong or missing
tokens, other people's games and challenges, illegal, malformed, over-long and non-ASCII moves
and bad bodies with the bot's own valid token on its real game, bad computer challenges, bad
token management, odd bodies and huge bodies (a reader that stops reading: the queue's bound
here, the live proof in ``test_bot_api_slow_reader.py``). Each gets the status docs/bots.md gives
and a clear ``{"error": …}`` (never a 5xx), nothing changes (the game goes on from where it was:
a sentinel move is the very next line of its stream; the tokens are the same), and the bot's
streams stay up. The requests are drawn in ``bot_fuzz.py``, refused by construction.
"""

from __future__ import annotations

import base64
import json
import logging
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, unquote

import aiohttp
import pytest
from bot_fuzz import sample
from bot_requests import BAD_CREDENTIALS, ENDPOINTS, PASSWORD, Call, Live, refused_move
from bot_support import base_url, call, make_bot, new_token
from ws_support import UNLIMITED_READS, OpenClient, StartApp
from yarl import URL

from server.transport.http_api.link import MAX_QUEUED, NdjsonStream

FISCHER = {"kind": "fischer", "base_s": 600, "inc_s": 0}
FAST = {"rate_limit_per_s": 100_000.0, "rate_limit_burst": 100_000, **UNLIMITED_READS}


def test_the_sample_reaches_the_bots_own_game_and_every_endpoint() -> None:
    """The fixed sample is what it should be: many requests with the bot's valid token on its
    real game, every endpoint with bad credentials; and none of them could change the game."""
    calls = sample()
    kinds = Counter(c.kind for c in calls)
    assert kinds["own_move"] + kinds["own_chat"] + kinds["own_answer"] >= 150, kinds
    strangers = {c.kind.removeprefix("stranger_") for c in calls if c.kind.startswith("stranger_")}
    assert strangers == set(ENDPOINTS), set(ENDPOINTS) - strangers
    own = [c for c in calls if c.who == "bot" and Live("game") in c.path]
    moves = [unquote(str(c.path[-1]), errors="surrogatepass") for c in own if "move" in c.path]
    assert "" in moves and any(len(m) > 32 for m in moves) and any(not m.isascii() for m in moves)
    for request in own:
        action = request.path[request.path.index(Live("game")) + 2]
        assert action in ("move", "chat", "draw", "takeback"), request  # never resign, abort
        if request.kind == "own_move_flag":  # a legal move, but a flag that is neither
            flag = parse_qs(request.query)["offeringDraw"][0]
            assert flag.lower() not in ("true", "false"), request
        elif action == "move":
            assert refused_move(unquote(str(request.path[-1]), errors="surrogatepass")), request
        elif action != "chat":
            assert request.path[-1] not in ("yes", "no"), request


def _headers(who: str, tokens: dict[str, str]) -> dict[str, str]:
    if who == "none":
        return {}
    if who == "basic":  # the right password, in a scheme the API does not take
        return {"Authorization": "Basic " + base64.b64encode(f"robo:{PASSWORD}".encode()).decode()}
    if who == "empty":
        return {"Authorization": "Bearer "}
    return {"Authorization": f"Bearer {tokens[who]}"}


def _problem(request: Call, status: int, raw: bytes) -> str | None:
    """What is wrong with an answer, or None."""
    if status >= 500:
        return "a server error"
    if request.expect and status not in request.expect:
        return f"expected {sorted(request.expect)}"
    if status >= 400:
        try:
            error = json.loads(raw)["error"]
        except (ValueError, KeyError, TypeError):
            return "no JSON error"
        return None if isinstance(error, str) and error else "an empty error"
    if request.kind == "online":
        listed = [json.loads(line)["username"] for line in raw.decode().splitlines()]
        return None if listed == ["robo"] else f"lists {listed}"
    return None


async def _token_ids(http: aiohttp.ClientSession, url: str, name: str) -> list[int]:
    form = {"name": name, "password": PASSWORD}
    async with http.post(f"{url}/api/token/list", data=form) as answer:
        assert answer.status == 200
        return sorted(token["id"] for token in (await answer.json())["tokens"])


async def test_fuzzed_requests_get_clear_errors_and_change_nothing(
    start_app: StartApp, open_client: OpenClient, caplog: pytest.LogCaptureFixture
) -> None:
    app = await start_app(**FAST)
    url = base_url(app)
    bot = await make_bot(app, open_client, "robo")
    other = await make_bot(app, open_client, "tron")
    revoked = await new_token(app, "robo")
    async with (
        aiohttp.ClientSession() as http,
        http.delete(f"{url}/api/token", headers={"Authorization": f"Bearer {revoked}"}) as answer,
    ):
        assert answer.status == 204
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    await human.ok(
        "match", {"to": "robo", "variant": "minishogi", "tc": FISCHER, "colour": "first"}
    )
    challenge = (await events.next("challenge"))["challenge"]["id"]
    await call(bot.client.bots.accept_challenge, challenge)
    game_id = (await events.next("gameStart"))["game"]["gameId"]
    stream = await bot.game(game_id)
    await stream.next("gameFull")
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a1b2"})
    await stream.next(lambda e: e["type"] == "gameState" and e["moves"] == "a1b2")
    tokens = {
        "garbage": "not-a-token",
        "vhb_garbage": "vhb_" + "x" * 43,
        "long": "vhb_" + "x" * 300,
        "other": other.token,
        "human": human.token,
        "revoked": revoked,
        "bot": bot.token,
    }
    assert set(BAD_CREDENTIALS) <= {*tokens, "none", "basic", "empty"}
    async with aiohttp.ClientSession() as http:
        robo_tokens = await _token_ids(http, url, "robo")
        tron_tokens = await _token_ids(http, url, "tron")
    live = {
        "game": game_id,
        "answered": str(challenge),
        "robo_token": str(robo_tokens[0]),
        "tron_token": str(tron_tokens[0]),
    }
    lines_before = (len(stream.seen), len(events.seen))
    caplog.set_level(logging.ERROR)
    problems: list[str] = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15)) as http:
        for request in sample():
            path = "".join(live[p.name] if isinstance(p, Live) else p for p in request.path)
            target = path + (f"?{request.query}" if request.query else "")
            kwargs: dict[str, Any] = {"headers": _headers(request.who, tokens)}
            if request.body is not None:
                kwargs["data"] = request.body
                if request.content_type:
                    kwargs["headers"]["Content-Type"] = request.content_type
            async with http.request(
                request.method, URL(url + target, encoded=True), **kwargs
            ) as answer:
                raw = await answer.read()
            problem = _problem(request, answer.status, raw)
            if problem:
                shown = f"{request.method} {target[:200]} as {request.who}: {answer.status}"
                problems.append(f"{request.kind}: {shown} {raw[:200]!r}: {problem}")
    assert not problems, "\n".join(problems)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    # Nothing changed: the tokens are the same, tron plays nothing, and the bot's move is the
    # very next line of its game stream (a line sent meanwhile would come before it).
    async with aiohttp.ClientSession() as http:
        assert await _token_ids(http, url, "robo") == robo_tokens
        assert await _token_ids(http, url, "tron") == tron_tokens
        assert await _token_ids(http, url, "alice") == []
    assert await call(other.client.games.get_ongoing) == []
    await call(bot.client.bots.make_move, game_id, "a5a2")
    state = await stream.next("gameState")
    assert state["moves"] == "a1b2 a5a2" and state["status"] == "started", state
    assert stream.seen[lines_before[0] :] == [state]
    # And the event stream is still up, with nothing sent meanwhile: the game's end and then a
    # new challenge are its next lines.
    await human.ok("resign", {"game": game_id})
    finish = await events.next("gameFinish")
    await human.ok("match", {"to": "robo", "variant": "minishogi", "tc": FISCHER})
    challenged = await events.next("challenge")
    assert challenged["challenge"]["challenger"]["name"] == "alice"
    assert events.seen[lines_before[1] :] == [finish, challenged]


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

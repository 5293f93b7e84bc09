"""The Bot API's game actions and challenge answers with valid calls, against the live server on
PostgreSQL (docs/bots.md): refused moves, draw and takeback answers, abort, declining and
cancelling challenges, ``opponentGone``, claiming an abandoned game, and the rate limit.

"Nothing else happened" is proved with a sentinel: a line that must be the very next one on the
stream (a move, a chat line), never by waiting a while.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import berserk
import pytest
from bot_support import Bot, StreamReader, base_url, call, challenge_bot, make_bot
from ws_support import Client, OpenClient, StartApp

from server.app import App
from server.transport.http_api.lichess import DECLINE_REASONS

BACKEND = "postgresql"


@dataclass
class Played:
    """A started game: alice (websocket, first) against the berserk bot robo (second), with the
    bot's event stream and game stream open and ``gameFull`` read."""

    app: App
    human: Client
    bot: Bot
    events: StreamReader
    stream: StreamReader
    game_id: str


async def _game(
    start_app: StartApp,
    open_client: OpenClient,
    variant: str,
    **settings: Any,
) -> Played:
    app = await start_app(BACKEND, **settings)
    bot = await make_bot(app, open_client, "robo")
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    game_id = await challenge_bot(human, bot, events, variant, "first")
    stream = await bot.game(game_id)
    assert (await stream.next())["type"] == "gameFull"
    return Played(app, human, bot, events, stream, game_id)


async def _next_state(stream: StreamReader) -> dict[str, Any]:
    """The very next line of the game stream, which must be a ``gameState``."""
    assert stream.backlog == [], stream.backlog
    state = await stream.next()
    assert state["type"] == "gameState", state
    return state


async def _refused(bot: Bot, path: str, status: int = 400) -> str:
    answer = await call(bot.post, path)
    assert answer.status_code == status, (path, answer.status_code, answer.text)
    assert answer.headers["Content-Type"].startswith("application/json"), answer.headers
    body = answer.json()
    assert list(body) == ["error"] and isinstance(body["error"], str) and body["error"], body
    message: str = body["error"]
    return message


async def test_illegal_and_malformed_moves_are_refused_and_change_nothing(
    start_app: StartApp, open_client: OpenClient
) -> None:
    game = await _game(start_app, open_client, "minishogi")
    human, bot, stream, game_id = game.human, game.bot, game.stream, game.game_id
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a1b2"})
    assert (await _next_state(stream))["moves"] == "a1b2"
    # Illegal: well-formed moves the position does not allow (onto its own pawn, through a
    # piece, a piece of the opponent's); malformed: not a move at all.
    refusals = {
        bad: await _refused(bot, f"/api/bot/game/{game_id}/move/{bad}")
        for bad in ("e5e4", "a5a1", "b2c3", "zz", "a5-a4", "P@", "a5a4a3a2a1")
    }
    assert refusals["e5e4"].endswith("the king on e5 cannot move to e4"), refusals
    assert refusals["b2c3"].endswith("the piece on b2 is not yours"), refusals
    for malformed in ("zz", "a5-a4", "P@", "a5a4a3a2a1"):
        assert "is not a move in coordinate form" in refusals[malformed], refusals
    # The game did not change: the next move is ply 2, and its state the stream's next line.
    await call(bot.client.bots.make_move, game_id, "a5a2")
    state = await _next_state(stream)
    assert state["moves"] == "a1b2 a5a2" and state["status"] == "started", state
    seen = [(m["d"]["ply"], m["d"]["uci"]) for m in await human.settled() if m["t"] == "move"]
    assert seen == [(1, "a1b2"), (2, "a5a2")], seen


async def _spartan_opening(human: Client, bot: Bot, stream: StreamReader, game_id: str) -> None:
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a2a3"})
    await _next_state(stream)
    await call(bot.client.bots.make_move, game_id, "a7b6")
    await _next_state(stream)


async def test_the_bot_accepts_a_draw_offer_with_draw_yes(
    start_app: StartApp, open_client: OpenClient
) -> None:
    game = await _game(start_app, open_client, "spartan")
    human, bot, events, stream, game_id = (
        game.human,
        game.bot,
        game.events,
        game.stream,
        game.game_id,
    )
    await _spartan_opening(human, bot, stream, game_id)
    await human.ok("draw_offer", {"game": game_id})
    offered = await _next_state(stream)
    assert (offered["wdraw"], offered["bdraw"]) == (True, False)
    answer = await call(bot.post, f"/api/bot/game/{game_id}/draw/yes")
    assert answer.status_code == 200 and answer.json() == {"ok": True}, answer.text
    final = await _next_state(stream)
    assert final["status"] == "draw" and "winner" not in final, final
    assert (final["wdraw"], final["bdraw"]) == (False, False)
    assert final["moves"] == "a2a3 a7b6"
    await stream.end()
    finish = await events.next("gameFinish")
    assert finish["game"]["status"]["name"] == "draw" and finish["game"]["winner"] is None
    ended = await human.next("end")
    assert ended["d"]["termination"] == "agreement", ended
    # The export (docs/bots.md): PGN for a chess variant; KIF and USI are shogi's only.
    export = f"{base_url(game.app)}/game/export/{game_id}"
    pgn = await call(bot.session.get, export, timeout=10)
    assert pgn.status_code == 200 and '[Result "1/2-1/2"]' in pgn.text, pgn.text
    for fmt in ("kif", "usi"):
        refused = await call(bot.session.get, f"{export}?format={fmt}", timeout=10)
        assert refused.status_code == 400 and refused.json()["error"], refused.text


async def test_the_bot_declines_a_draw_offer_with_draw_no_and_the_game_goes_on(
    start_app: StartApp, open_client: OpenClient
) -> None:
    game = await _game(start_app, open_client, "spartan")
    human, bot, stream, game_id = game.human, game.bot, game.stream, game.game_id
    await _spartan_opening(human, bot, stream, game_id)
    await human.ok("draw_offer", {"game": game_id})
    assert (await _next_state(stream))["wdraw"] is True
    answer = await call(bot.post, f"/api/bot/game/{game_id}/draw/no")
    assert answer.status_code == 200 and answer.json() == {"ok": True}, answer.text
    declined = await _next_state(stream)
    assert (declined["wdraw"], declined["bdraw"]) == (False, False)
    assert declined["status"] == "started" and declined["moves"] == "a2a3 a7b6"
    told = await human.next(lambda m: m["t"] == "offer" and m["d"]["action"] == "decline")
    assert told["d"]["kind"] == "draw" and told["d"]["side"] == "second", told
    # The game goes on: the human's next move is the stream's next line.
    await human.ok("move", {"game": game_id, "ply": 3, "move": "b2b3"})
    state = await _next_state(stream)
    assert state["moves"] == "a2a3 a7b6 b2b3" and state["status"] == "started"


async def test_the_bot_declines_a_takeback_with_takeback_no(
    start_app: StartApp, open_client: OpenClient
) -> None:
    game = await _game(start_app, open_client, "shoshogi")
    human, bot, stream, game_id = game.human, game.bot, game.stream, game.game_id
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a1a2"})
    await _next_state(stream)
    await call(bot.client.bots.make_move, game_id, "a7a6")
    await _next_state(stream)
    await human.ok("takeback_offer", {"game": game_id})
    asked = await _next_state(stream)
    assert (asked["wtakeback"], asked["btakeback"]) == (True, False)
    answer = await call(bot.post, f"/api/bot/game/{game_id}/takeback/no")
    assert answer.status_code == 200 and answer.json() == {"ok": True}, answer.text
    declined = await _next_state(stream)
    assert (declined["wtakeback"], declined["btakeback"]) == (False, False)
    assert declined["moves"] == "a1a2 a7a6", "declining takes nothing back"
    await human.ok("move", {"game": game_id, "ply": 3, "move": "a3a4"})
    assert (await _next_state(stream))["moves"] == "a1a2 a7a6 a3a4"


async def test_the_bot_aborts_before_its_first_move(
    start_app: StartApp, open_client: OpenClient
) -> None:
    game = await _game(start_app, open_client, "minishogi")
    human, bot, events, stream, game_id = (
        game.human,
        game.bot,
        game.events,
        game.stream,
        game.game_id,
    )
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a1b2"})
    await _next_state(stream)
    await call(bot.client.bots.abort_game, game_id)
    final = await _next_state(stream)
    assert final["status"] == "aborted" and "winner" not in final, final
    await stream.end()
    finish = await events.next("gameFinish")
    assert finish["game"]["status"]["name"] == "aborted" and finish["game"]["gameId"] == game_id
    assert (await human.next("end"))["d"]["termination"] == "abort"


async def test_a_bot_declines_challenges_with_a_reason(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(BACKEND)
    robo, tron = await make_bot(app, open_client, "robo"), await make_bot(app, open_client, "tron")
    robo_events, tron_events = await robo.events(), await tron.events()
    # Bot to bot, with one of lichess's reason keys (berserk's decline_challenge).
    made = await call(
        robo.client.challenges.create,
        "tron",
        False,
        clock_limit=180,
        clock_increment=2,
        color="white",
        variant="minishogi",
    )
    assert (await tron_events.next("challenge"))["challenge"]["id"] == made["id"]
    await call(tron.client.bots.decline_challenge, made["id"], "tooFast")
    declined = await robo_events.next("challengeDeclined")
    challenge = declined["challenge"]
    assert challenge["id"] == made["id"] and challenge["status"] == "declined"
    assert challenge["declineReasonKey"] == "tooFast"
    assert challenge["declineReason"] == DECLINE_REASONS["tooFast"]
    assert challenge["challenger"]["name"] == "robo" and challenge["destUser"]["name"] == "tron"
    assert challenge["destUser"]["title"] == "BOT" and challenge["variant"]["key"] == "minishogi"
    assert challenge["timeControl"] == {
        "type": "clock",
        "limit": 180,
        "increment": 2,
        "show": "3+2",
    }
    assert (challenge["color"], challenge["rated"]) == ("white", False)
    # A websocket challenger gets the reason as given (free text here), the form's ``reason``.
    human = await open_client(app, "alice")
    await human.register("alice")
    asked = await human.ok(
        "match",
        {"to": "tron", "variant": "spartan", "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0}},
    )
    incoming = await tron_events.next("challenge")
    assert incoming["challenge"]["id"] == str(asked["challenge"])
    answer = await call(
        tron.post,
        f"/api/challenge/{asked['challenge']}/decline",
        data={"reason": "Not now, thanks"},
    )
    assert answer.status_code == 200 and answer.json() == {"ok": True}, answer.text
    told = await human.next("challenge_declined")
    assert told["d"] == {"id": asked["challenge"], "reason": "Not now, thanks"}, told
    # A declined challenge is gone: accepting it now is a 404.
    with pytest.raises(berserk.exceptions.ResponseError) as late:
        await call(tron.client.bots.accept_challenge, made["id"])
    assert late.value.status_code == 404


async def test_a_bot_cancels_its_challenge_and_the_other_bot_is_told(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(BACKEND)
    robo, tron = await make_bot(app, open_client, "robo"), await make_bot(app, open_client, "tron")
    robo_events, tron_events = await robo.events(), await tron.events()
    made = await call(
        robo.client.challenges.create,
        "tron",
        False,
        clock_limit=60,
        clock_increment=0,
        color="black",
        variant="wildcastle",
    )
    assert made["status"] == "created" and made["challenger"]["name"] == "robo"
    assert (await tron_events.next("challenge"))["challenge"]["id"] == made["id"]
    await call(robo.client.challenges.cancel, made["id"])
    canceled = await tron_events.next("challengeCanceled")
    challenge = canceled["challenge"]
    assert challenge["id"] == made["id"] and challenge["status"] == "canceled"
    assert challenge["challenger"]["name"] == "robo" and challenge["color"] == "black"
    assert "declineReason" not in challenge
    with pytest.raises(berserk.exceptions.ResponseError) as late:
        await call(tron.client.bots.accept_challenge, made["id"])
    assert late.value.status_code == 404
    # The canceller's own stream is not told its own cancel: its next event is the next challenge.
    await call(tron.client.challenges.create, "robo", False, clock_limit=60, variant="minishogi")
    assert (await robo_events.next())["type"] == "challenge"


async def test_opponent_gone_and_back_on_the_game_stream(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """The websocket opponent drops: ``opponentGone`` with the countdown (the reconnect grace,
    45 s here); it comes back (a new connection resumes the session): ``gone: false``."""
    game = await _game(start_app, open_client, "minishogi", reconnect_grace_s=45.0)
    token = game.human.token
    assert token is not None
    await game.human.close()
    gone = await game.stream.next()
    assert gone == {"type": "opponentGone", "gone": True, "claimWinInSeconds": 45}, gone
    back = await open_client(game.app, "alice")
    await back.resume(token)
    assert await game.stream.next() == {"type": "opponentGone", "gone": False}
    # The game goes on with the returning player: its move is the stream's next line.
    await back.ok("move", {"game": game.game_id, "ply": 1, "move": "a1b2"})
    assert (await _next_state(game.stream))["moves"] == "a1b2"


async def test_a_bot_claims_an_abandoned_game_through_the_websocket(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """There is no ``claim-victory`` endpoint (docs/bots.md): once ``opponentGone`` says
    ``claimWinInSeconds: 0``, the bot account logs in on the websocket and sends
    ``abandon_claim``; its game stream ends with status ``timeout``, the bot the winner."""
    # 60 s + 0: the countdown is a tenth of the game's estimated length (6 s), the grace 1 s.
    game = await _game(start_app, open_client, "minishogi", reconnect_grace_s=1.0)
    await game.human.ok("move", {"game": game.game_id, "ply": 1, "move": "a1b2"})
    await _next_state(game.stream)
    await call(game.bot.client.bots.make_move, game.game_id, "a5a2")
    await _next_state(game.stream)
    await game.human.close()
    gone = await game.stream.next()
    assert gone == {"type": "opponentGone", "gone": True, "claimWinInSeconds": 6}, gone
    claimable = await game.stream.next()
    assert claimable == {"type": "opponentGone", "gone": True, "claimWinInSeconds": 0}
    same_account = await open_client(game.app, "robo")
    await same_account.login("robo")
    await same_account.ok("abandon_claim", {"game": game.game_id, "outcome": "win"})
    final = await _next_state(game.stream)
    assert (final["status"], final["winner"]) == ("timeout", "black"), final
    await game.stream.end()
    assert (await game.events.next("gameFinish"))["game"]["winner"] == "black"


async def test_over_the_rate_limit_a_bot_gets_429_and_nothing_changes(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """The link's token bucket (``link.py``, the websocket's settings): a burst of 8 refilled at
    one every 1000 s. The bot's accept and its game stream's join took two; illegal moves take
    the rest (400), then every command is a 429 with a JSON error, a legal move included."""
    game = await _game(
        start_app, open_client, "minishogi", rate_limit_per_s=0.001, rate_limit_burst=8
    )
    human, bot, stream, game_id = game.human, game.bot, game.stream, game.game_id
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a1b2"})
    await _next_state(stream)
    statuses: list[int] = []
    while 429 not in statuses:
        assert len(statuses) < 8, statuses
        answer = await call(bot.post, f"/api/bot/game/{game_id}/move/e5e4")
        statuses.append(answer.status_code)
    assert statuses == [400] * (len(statuses) - 1) + [429] and len(statuses) == 7, statuses
    message = await _refused(bot, f"/api/bot/game/{game_id}/move/a5a2", 429)
    assert "Too many requests" in message
    with pytest.raises(berserk.exceptions.ResponseError) as limited:
        await call(bot.client.bots.make_move, game_id, "a5a2")
    assert limited.value.status_code == 429
    # Nothing changed: the human's chat line is the stream's next line (no move before it),
    # and the human saw no move either.
    await human.ok("chat", {"game": game_id, "text": "still there?"})
    assert stream.backlog == []
    line = await stream.next()
    assert line == {
        "type": "chatLine",
        "room": "player",
        "username": "alice",
        "text": "still there?",
    }
    assert not [m for m in await human.settled() if m["t"] == "move" and m["d"]["ply"] > 1]


async def test_playing_on_declines_a_draw_offer_in_one_game_state(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """The bot's move declines the human's draw offer and cancels a takeback offer: the stream
    gets one ``gameState`` with the move and the offers gone, as on lichess, not first one
    with only the offer gone and the game seemingly waiting for the bot."""
    game = await _game(start_app, open_client, "spartan")
    human, bot, stream, game_id = game.human, game.bot, game.stream, game.game_id
    await _spartan_opening(human, bot, stream, game_id)
    await human.ok("move", {"game": game_id, "ply": 3, "move": "b2b3"})
    assert (await _next_state(stream))["moves"] == "a2a3 a7b6 b2b3"
    await human.ok("draw_offer", {"game": game_id})
    assert (await _next_state(stream))["wdraw"] is True
    await human.ok("takeback_offer", {"game": game_id})
    assert (await _next_state(stream))["wtakeback"] is True
    await call(bot.client.bots.make_move, game_id, "b7c6")
    state = await _next_state(stream)
    assert state["moves"] == "a2a3 a7b6 b2b3 b7c6", state
    assert not (state["wdraw"] or state["bdraw"] or state["wtakeback"] or state["btakeback"])
    # The sentinel: the human's next move is the very next line.
    await human.ok("move", {"game": game_id, "ply": 5, "move": "c2c3"})
    assert (await _next_state(stream))["moves"] == "a2a3 a7b6 b2b3 b7c6 c2c3"

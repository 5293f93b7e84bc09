"""Every message the server actually sends matches its declared payload schema
(server.hub.messages.PAYLOADS, from whose types web/src/protocol.gen.ts is generated): a short but complete
session is played through the real server and every frame each client received is checked,
so a message builder that drifts from its schema (a renamed key, a new one, a wrong type)
fails here."""

from __future__ import annotations

from ws_support import Client, OpenClient, StartApp, start_game

from server.hub.messages import PAYLOADS, MessageKind
from server.hub.payload_check import payload_problems

MINI = {"variant": "minishogi", "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0}}
BYOYOMI = {"kind": "byoyomi", "main_s": 60, "period_s": 10, "periods": 1}

NOT_PLAYED = {
    MessageKind.DEGRADED,  # needs Redis to fail (tests/cluster)
    MessageKind.COMPUTER_GAME,  # goes to an engine worker's connection (tests/worker)
    MessageKind.ANALYSE,  # needs an engine worker (tests/transport/test_analysis_e2e.py)
    MessageKind.ANALYSIS,
    MessageKind.MY_GAMES,  # registered players' (tests/transport/test_notify.py checks them)
    MessageKind.MAIL_SETTINGS,
}
"""Kinds this flow cannot provoke, and where they are exercised."""


def _problems(clients: list[Client]) -> list[str]:
    found: list[str] = []
    for client in clients:
        for message in client.seen:
            for problem in payload_problems(message["t"], message["d"]):
                found.append(f"{client.name}: {message['t']}: {problem}")
    return found


async def test_every_frame_of_a_played_session_matches_its_schema(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b, watcher = [await open_client(app, name) for name in ("a", "b", "watcher")]
    for client in (a, b, watcher):
        await client.guest()
    assert (await a.request("ping"))["t"] == MessageKind.PONG
    # lobby: the seek list, who is online, a seek added and removed
    await a.ok("sought", {"watch": True})
    await b.ok("who")
    seek = await b.ok("seek", {**MINI, "tc": BYOYOMI, "range": [0, 4000]})
    await a.next(MessageKind.SEEK_ADDED)
    await b.ok("unseek", {"id": seek["seek"]})
    await a.next(MessageKind.SEEK_REMOVED)
    # challenges: declined, withdrawn, accepted
    assert b.player is not None
    for answer in ("decline", "withdraw"):
        sent = await a.ok("match", {**MINI, "to": b.player["name"]})
        await b.next(MessageKind.CHALLENGE)
        if answer == "decline":
            await b.ok("decline", {"id": sent["challenge"], "reason": "not now"})
            await a.next(MessageKind.CHALLENGE_DECLINED)
        else:
            await a.ok("withdraw", {"id": sent["challenge"]})
            await b.next(MessageKind.CHALLENGE_WITHDRAWN)
    await a.ok("sought", {"watch": False})
    await a.ok("match", {**MINI, "to": b.player["name"]})  # cancelled when their game starts
    # a game: moves, a refused move (error with state), a takeback offered (an ``offer``) and
    # accepted, chat, resignation
    game = await start_game(a, b)
    await a.next(MessageKind.CHALLENGE_CANCELLED)
    await watcher.ok("join", {"game": game.id})
    await game.play(game.legal[0])
    refused = await game.mover().request("move", {"game": game.id, "ply": 9, "move": "a1a1"})
    assert refused["t"] == MessageKind.ERROR and "state" in refused["d"]
    await game.play(game.legal[0])
    await game.second.ok("takeback_offer", {"game": game.id})
    await game.first.ok("takeback_accept", {"game": game.id})
    await game.first.next(MessageKind.TAKEBACK)
    await game.first.ok("chat", {"game": game.id, "text": "sorry"})
    await watcher.ok("chat", {"game": game.id, "text": "hm"})
    await watcher.next(MessageKind.CHAT)
    await game.first.ok("resign", {"game": game.id})
    await game.end()
    # a rematch, then a player gone and back, then the review commands
    await game.first.ok("rematch_offer", {"game": game.id})
    await game.second.ok("rematch_accept", {"game": game.id})
    rematch = await game.first.next(MessageKind.REMATCH)
    new_game = rematch["d"]["new_game"]
    await game.first.next(lambda m: m["t"] == MessageKind.GAME and m["d"]["game"] == new_game)
    token = game.second.token
    assert token is not None
    await game.second.close()
    await game.first.next(MessageKind.GONE)
    back = await open_client(app, "b again")
    await back.resume(token)
    await game.first.next(MessageKind.BACK)
    c = await open_client(app, "c")
    await c.guest()
    assert c.player is not None
    sent = await watcher.ok("match", {**MINI, "to": c.player["name"]})
    await c.next(MessageKind.CHALLENGE)
    await c.ok("accept", {"id": sent["challenge"]})
    await watcher.next(MessageKind.CHALLENGE_ACCEPTED)
    # a correspondence game beside: a conditional premove line (``premoves``, ``premove_line``)
    owner = game.first  # still connected (the second reconnected as ``back``)
    assert owner.player is not None
    days = {"variant": "minishogi", "tc": {"kind": "correspondence", "days": 1}}
    sent = await c.ok("match", {**days, "to": owner.player["name"], "colour": "first"})
    accepted = await owner.ok("accept", {"id": sent["challenge"]})
    corr = accepted["game"]
    await owner.next(lambda m: m["t"] == MessageKind.GAME_START and m["d"]["game"] == corr)
    await owner.ok("premoves", {"game": corr, "lines": [["a1b2", "a5a2"]]})
    await owner.next(MessageKind.PREMOVES)
    await owner.ok("premove_line", {"game": corr, "moves": ["a1b2"]})
    reader = game.first
    listed = await reader.ok("games", {"limit": 5})
    assert game.id in [g["id"] for g in listed["games"]]
    await reader.ok("review", {"game": game.id, "ply": 1})
    await reader.ok("export", {"game": game.id, "format": "kif"})
    # a tournament: listed, watched (its view and chat, then standings and a line pushed), a game
    # with a berserk
    t1, t2 = await open_client(app, "t1"), await open_client(app, "t2")
    await t1.register("tourney1")
    await t2.register("tourney2")
    arena = {**MINI, "name": "Cup", "format": "arena", "duration_s": 600, "start_when_joined": 2}
    tournament = (await t1.ok("tournament_create", arena))["tournament"]
    await watcher.ok("tournament_list")
    await watcher.ok("tournament_watch", {"id": tournament})
    await t1.ok("tournament_join", {"id": tournament})
    await t2.ok("tournament_join", {"id": tournament})
    await t1.ok("tournament_chat", {"id": tournament, "text": "good luck"})
    await watcher.next(MessageKind.TOURNAMENT_CHAT)
    paired = (await t1.next(MessageKind.GAME_START))["d"]["game"]
    await t1.ok("berserk", {"game": paired})
    await t2.next(MessageKind.BERSERK)
    await watcher.next(MessageKind.TOURNAMENT_STANDINGS)
    await watcher.ok("tournament_round", {"id": tournament, "round": 1})

    clients = [a, b, watcher, back, c, t1, t2]
    problems = _problems(clients)
    assert not problems, "\n".join(problems)
    kinds = {message["t"] for client in clients for message in client.seen}
    assert kinds == set(PAYLOADS) - NOT_PLAYED, "the flow no longer provokes every kind"


def test_a_drifted_payload_is_caught() -> None:
    """The check itself: a missing key, an unknown key and a wrong type are each reported."""
    ok = {"game": "g1", "side": "first", "opponent": {"id": "p", "name": "P", "guest": True}}
    assert payload_problems(MessageKind.GAME_START, ok) == []
    assert payload_problems(MessageKind.GAME_START, {**ok, "colour": "first"}) == [
        "d: unknown key 'colour'"
    ]
    assert payload_problems(MessageKind.GAME_START, {**ok, "side": "white"}) != []
    assert payload_problems(MessageKind.GAME_START, {**ok, "opponent": {"id": "p"}}) == [
        "d.opponent: missing 'guest'",
        "d.opponent: missing 'name'",
    ]
    assert payload_problems(MessageKind.SEEK_REMOVED, {"id": True}) == [
        "d.id: True is not an integer"
    ]

"""Complete games through the real server: every ending, every variant, observers, reconnection,
racing accepts, and what ends up in the database."""

from __future__ import annotations

import asyncio
import random

import pytest
from support import poll, wait_until
from ws_support import Client, OpenClient, StartApp, play_random, start_game

from server.app import App
from server.rules import VARIANT_NAMES, MoveRecord, get_variant
from server.store import GameRecord

MATE_IN_4 = ["a1b2", "a5a2", "b2c3", "d5c4"]  # Mini-Shogi: the second player mates
REPETITION = ["b1b2", "d5d4", "b2b1", "d4d5"] * 3  # Mini-Shogi: the start position 4 times
CHESS_VARIANTS = [name for name in VARIANT_NAMES if get_variant(name).family == "chess"]
BOTH = pytest.mark.parametrize("backend", ["sqlite", "postgresql"])


async def two_guests(app: App, open_client: OpenClient) -> tuple[Client, Client]:
    a, b = await open_client(app, "a"), await open_client(app, "b")
    await a.guest()
    await b.guest()
    return a, b


async def stored_when_finished(app: App, game_id: str) -> GameRecord:
    """The stored game once its end is committed."""
    stored = await poll(
        lambda: app.store.get_game(game_id),
        lambda stored: stored is not None and stored.status in ("finished", "aborted"),
    )
    assert stored is not None
    return stored


@BOTH
async def test_checkmate_in_mini_shogi_is_stored_move_by_move(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    for uci in MATE_IN_4:
        assert uci in game.legal
        event = await game.play(uci)
    assert event["d"]["legal"] == [] and event["d"]["check"] is True
    end = await game.end()
    assert end["d"]["termination"] == "checkmate"
    assert end["d"]["result"] == "0-1" and end["d"]["winner"] == "second"
    assert end["v"] == event["v"] + 1
    stored = await stored_when_finished(app, game.id)
    assert stored.status == "finished" and stored.result == "0-1"
    assert [m.uci for m in stored.moves] == MATE_IN_4
    assert stored.termination == "checkmate"


async def test_two_matching_seeks_are_paired_automatically(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b = await two_guests(app, open_client)
    tc = {"kind": "byoyomi", "main_s": 300, "period_s": 10, "periods": 2}
    first = await a.ok("seek", {"variant": "minishogi", "tc": tc, "colour": "second"})
    assert "seek" in first
    paired = await b.ok("seek", {"variant": "minishogi", "tc": tc})
    game_id = paired["game"]
    starts = [
        await c.next(lambda m: m["t"] == "game_start" and m["d"]["game"] == game_id)
        for c in (a, b)
    ]
    assert [s["d"]["side"] for s in starts] == ["second", "first"]
    assert app.hub.seeks() == []
    snapshot = await a.next("game")
    assert snapshot["d"]["tc"] == tc and snapshot["d"]["status"] == "started"


async def test_every_move_is_committed_before_it_is_acknowledged(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    for ply, uci in enumerate(MATE_IN_4[:3], start=1):
        await game.play(uci)
        stored = await app.store.get_game(game.id)
        assert stored is not None and len(stored.moves) == ply


@BOTH
async def test_resignation(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    await game.play("a1b2")
    await game.play("a5a2")
    await game.first.ok("resign", {"game": game.id})
    end = await game.end()
    assert (end["d"]["termination"], end["d"]["result"]) == ("resignation", "0-1")
    stored = await stored_when_finished(app, game.id)
    assert stored.plies == 2
    late = await game.second.request("move", {"game": game.id, "ply": 3, "move": "b2c3"})
    assert late["d"]["code"] == "game_over"


@BOTH
async def test_time_forfeit_with_a_short_byoyomi_clock(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    a, b = await two_guests(app, open_client)
    tc = {"kind": "byoyomi", "main_s": 0, "period_s": 1, "periods": 1}
    game = await start_game(a, b, tc=tc)
    await game.play("a1b2")
    await game.play("a5a2")  # the clock starts: the first player has one 1 s period
    end = await game.end()
    assert (end["d"]["termination"], end["d"]["winner"]) == ("time", "second")
    stored = await stored_when_finished(app, game.id)
    assert stored.termination == "time" and stored.result == "0-1"


@BOTH
async def test_abort_before_both_players_moved(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    await game.play("a1b2")
    await game.second.ok("abort", {"game": game.id})
    end = await game.end()
    assert end["d"]["termination"] == "abort" and end["d"]["result"] is None
    stored = await stored_when_finished(app, game.id)
    assert stored.status == "aborted"
    # Both players are free again: a new game can start at once.
    again = await start_game(a, b)
    assert again.id != game.id


@BOTH
async def test_repetition_ends_the_game(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    for uci in REPETITION:
        await game.play(uci)
    end = await game.end()
    assert end["d"]["termination"] == "repetition"
    stored = await stored_when_finished(app, game.id)
    assert len(stored.moves) == len(REPETITION)


@BOTH
async def test_draw_by_agreement_in_a_chess_variant(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b, variant=CHESS_VARIANTS[0])
    rng = random.Random(5)
    await game.play(rng.choice(game.legal))
    await game.play(rng.choice(game.legal))
    await game.first.ok("draw_offer", {"game": game.id})
    offer = await game.second.next("offer")
    assert offer["d"]["kind"] == "draw" and offer["d"]["action"] == "offer"
    await game.second.ok("draw_accept", {"game": game.id})
    end = await game.end()
    assert (end["d"]["termination"], end["d"]["result"]) == ("agreement", "1/2-1/2")
    stored = await stored_when_finished(app, game.id)
    assert stored.result == "1/2-1/2"


@pytest.mark.parametrize("variant", VARIANT_NAMES)
async def test_a_complete_game_of_every_variant(
    variant: str, start_app: StartApp, open_client: OpenClient
) -> None:
    """Random legal moves from the server's own lists until the game ends (or 60 plies, then
    the side to move resigns). The clients answer each ack at once, faster than a person: the
    per-socket rate limit is raised here and tested on its own in test_transport_limits."""
    app = await start_app(rate_limit_per_s=1000.0, rate_limit_burst=1000)
    a, b = await two_guests(app, open_client)
    game = await start_game(
        a, b, variant=variant, tc={"kind": "fischer", "base_s": 600, "inc_s": 0}
    )
    plies = 30 if variant == "daishogi" else 60
    end = await play_random(game, random.Random(variant), plies)
    if end is None:
        await game.mover().ok("resign", {"game": game.id})
        end = await game.end()
    stored = await stored_when_finished(app, game.id)
    assert len(stored.moves) == game.ply
    assert stored.variant == variant
    assert stored.termination == end["d"]["termination"]


async def test_observers_receive_the_same_versioned_stream(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    watchers = [await open_client(app, f"w{i}") for i in range(2)]
    for watcher in watchers:
        await watcher.guest()
        await watcher.ok("join", {"game": game.id})
        snapshot = await watcher.next("game")
        assert snapshot["d"]["role"] == "spectator" and snapshot["v"] == game.version
        watcher.seen.clear()
    for player in (game.first, game.second):
        player.seen.clear()
    for uci in MATE_IN_4:
        await game.play(uci)
    await game.end()

    def room_events(client: Client) -> list[dict[str, object]]:
        return [m for m in client.seen if "v" in m]

    for watcher in watchers:
        await watcher.next("end")
        events = room_events(watcher)
        assert [e["t"] for e in events] == ["move"] * 4 + ["end"]
        versions = [e["v"] for e in events]
        assert versions == list(range(versions[0], versions[0] + 5))
        assert events == room_events(game.first) == room_events(game.second)


async def test_reconnect_mid_game_replays_the_missed_events(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    await game.play("a1b2")
    first_token, seen_version = game.first.token, game.version
    assert first_token is not None
    await game.first.close()
    gone = await game.second.next("gone")
    assert gone["d"]["side"] == "first"
    # The second player moves while the first is away.
    ack = await game.second.ok("move", {"game": game.id, "ply": 2, "move": "a5a2"})
    assert ack["ply"] == 2
    back = await open_client(app, "first-again")
    welcome = await back.request("resume", {"token": first_token})
    assert welcome["t"] == "welcome"
    hello = await back.next("hello")
    assert hello["d"]["game"] == game.id
    joined = await back.ok("join", {"game": game.id, "v": seen_version})
    missed = [m for m in await back.settled() if "v" in m]
    assert [m["t"] for m in missed] == ["gone", "move", "back"]
    assert [m["v"] for m in missed] == list(range(seen_version + 1, seen_version + 4))
    assert joined["v"] == missed[-1]["v"]
    assert missed[1]["d"]["uci"] == "a5a2"
    # Play resumes from the new connection.
    game.first = back
    back.drop_backlog()
    game.turn, game.ply, game.legal = "first", 2, missed[1]["d"]["legal"]
    await game.play("b2c3")


async def test_reconnect_without_a_version_gets_a_snapshot(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    await game.play("a1b2")
    token = game.second.token
    await game.second.close()
    back = await open_client(app)
    await back.resume(token)  # type: ignore[arg-type]
    await back.ok("join", {"game": game.id})
    snapshot = await back.next("game")
    assert snapshot["d"]["role"] == "second" and snapshot["d"]["moves"] == ["a1b2"]


@BOTH
async def test_two_clients_racing_to_accept_one_seek_start_exactly_one_game(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    seeker = await open_client(app)
    await seeker.guest()
    racers = [await open_client(app, f"r{i}") for i in range(4)]
    for racer in racers:
        await racer.guest()
    seek = await seeker.ok(
        "seek", {"variant": "minishogi", "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0}}
    )
    answers = await asyncio.gather(*(r.request("play", {"id": seek["seek"]}) for r in racers))
    winners = [a for a in answers if a["t"] == "ack"]
    losers = [a for a in answers if a["t"] == "error"]
    assert len(winners) == 1 and len(losers) == 3
    assert {a["d"]["code"] for a in losers} == {"no_such_seek"}
    game_id = winners[0]["d"]["game"]
    await seeker.next(lambda m: m["t"] == "game_start" and m["d"]["game"] == game_id)
    stored = await app.store.list_games(status="started")
    assert [g.id for g in stored.games] == [game_id]


async def test_a_move_the_database_refuses_is_taken_back_with_a_clear_error(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """Another writer stored ply 2 first (the database's primary key refuses ours)."""
    app = await start_app()
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    await game.play("a1b2")
    await app.store.append_move(game.id, MoveRecord(2, "a5a4", "P-4a", 60_000, 0))
    refused = await game.second.request("move", {"game": game.id, "ply": 2, "move": "a5a2"})
    assert refused["t"] == "error" and refused["d"]["code"] == "move_not_saved"
    assert "taken back" in refused["d"]["message"]
    assert refused["d"]["state"]["ply"] == 1
    # Nobody saw the move; the room is back at ply 1 and accepts moves again.
    assert not [m for m in await game.first.settled() if m["t"] == "move"]
    room = app.hub.room(game.id)
    assert room is not None and len(room.records) == 1 and not room.busy


async def test_seek_list_updates_reach_watchers(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b = await two_guests(app, open_client)
    listing = await b.request("sought", {"watch": True})
    assert listing["t"] == "sought" and listing["d"]["seeks"] == []
    seek = await a.ok(
        "seek", {"variant": "shoshogi", "tc": {"kind": "fischer", "base_s": 300, "inc_s": 5}}
    )
    added = await b.next("seek_added")
    assert added["d"]["id"] == seek["seek"] and added["d"]["variant"] == "shoshogi"
    await a.ok("unseek", {"id": seek["seek"]})
    removed = await b.next("seek_removed")
    assert removed["d"]["id"] == seek["seek"]
    await wait_until(lambda: app.hub.seeks() == [])


async def test_a_takeback_is_stored_before_it_is_acknowledged(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    await game.play("a1b2")
    await game.play("a5a2")
    await game.play("b2c3")
    await game.first.ok("takeback_offer", {"game": game.id})
    await game.second.ok("takeback_accept", {"game": game.id})
    event = await game.first.next("takeback")
    assert event["d"]["ply"] == 2 and event["d"]["turn"] == "first"
    stored = await app.store.get_game(game.id)
    assert stored is not None and [m.uci for m in stored.moves] == ["a1b2", "a5a2"]
    game.turn, game.ply, game.legal = "first", 2, event["d"]["legal"]
    await game.second.next("takeback")
    await game.play("b2c3")  # ply 3 again: the stored row was deleted
    stored = await app.store.get_game(game.id)
    assert stored is not None and len(stored.moves) == 3


async def test_players_and_spectators_chat_in_separate_rooms(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b = await two_guests(app, open_client)
    game = await start_game(a, b)
    watcher = await open_client(app)
    await watcher.guest()
    await watcher.ok("join", {"game": game.id})
    await game.first.ok("chat", {"game": game.id, "text": "good luck"})
    line = await game.second.next("chat")
    assert line["d"]["text"] == "good luck" and line["d"]["room"] == "players"
    await watcher.ok("chat", {"game": game.id, "text": "nice opening"})
    seen = await watcher.next("chat")
    assert seen["d"]["room"] == "spectators"
    # Neither room's line reached the other room.
    assert [m["d"]["room"] for m in await game.first.settled() if m["t"] == "chat"] == ["players"]
    assert not [m for m in await watcher.settled() if m["t"] == "chat"]

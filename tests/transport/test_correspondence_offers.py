"""Stored correspondence seeks and challenges (docs/correspondence.md, "Seeks and
challenges"): a registered player's correspondence seek stays in the lobby while the player is
offline and across a restart, and taking it makes the game with the seeker away; a
correspondence challenge may name an offline player, waits in the store, is shown at login
(the websocket's ``hello``, ICS's challenge notice, the Bot API's event stream through
berserk, unmodified) and
answered after a restart; the limits and someone else's seek are refused with nothing
changed. Acknowledged means stored: the ack of a seek, a challenge and a withdrawal comes after
its row's write; a write that fails answers ``offer_not_saved`` and leaves nothing open."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from bot_support import Bot, call, make_bot
from ics_support import IcsClient
from sqlalchemy import text
from support import poll
from ws_support import Client, OpenClient, StartApp

from server.app import App
from server.rules import get_variant
from server.rules.time_control import Correspondence

DAYS = {"kind": "correspondence", "days": 3}
SEEK = {"variant": "minishogi", "tc": DAYS}


async def _gone(app: App, client: Client) -> None:
    """``client`` closed, and the hub has run its disconnect (the sentinel: the player is no
    longer among the hub's online players)."""
    assert client.player is not None
    player_id = client.player["id"]
    await client.close()

    async def online() -> bool:
        return player_id in app.hub.state.players

    await poll(online, lambda here: not here)


def _views(app: App) -> list[Any]:
    return [seek.view() for seek in app.hub.seeks()]


async def _stored(app: App) -> list[tuple[str, str]]:
    """The stored offers: (owner, target) names (``""``: a seek), sorted."""
    return sorted(
        (o.player.name, "" if o.target is None else o.target.name)
        for o in await app.store.stored_offers()
    )


async def _stored_soon(app: App, expected: list[tuple[str, str]]) -> None:
    """The store holds ``expected`` once the writes queued so far are done (the deletes of
    offers answered by a game are not waited for)."""
    await poll(lambda: _stored(app), lambda got: got == expected)


async def _registered(app: App, open_client: OpenClient, name: str) -> Client:
    client = await open_client(app, name)
    assert (await client.register(name))["t"] == "welcome"
    return client


async def _resumed(app: App, open_client: OpenClient, token: str | None) -> Client:
    assert token is not None
    client = await open_client(app)
    assert (await client.resume(token))["t"] == "welcome"
    return client


async def test_a_seek_is_taken_while_its_player_is_away(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    alice = await _registered(app, open_client, "alice")
    bob = await _registered(app, open_client, "bobby")
    seek_id = (await alice.ok("seek", SEEK))["seek"]
    token = alice.token
    await _gone(app, alice)
    listed = await bob.ok("sought")
    assert [(s["id"], s["player"]["name"]) for s in listed["seeks"]] == [(seek_id, "alice")]
    game_id = (await bob.ok("play", {"id": seek_id}))["game"]
    assert (await bob.next("game_start"))["d"]["game"] == game_id
    assert (await bob.ok("sought"))["seeks"] == []
    await _stored_soon(app, [])  # taken: no longer stored
    back = await _resumed(app, open_client, token)
    assert back.hello is not None and back.hello["d"]["correspondence"] == [game_id]
    mine = await back.request("my_games")
    assert [g["game"] for g in mine["d"]["games"]] == [game_id]


async def test_seeks_and_challenges_survive_a_restart(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    for name in ("bobby", "carol"):  # accounts, then offline
        await _gone(app, await _registered(app, open_client, name))
    alice = await _registered(app, open_client, "alice")
    await alice.ok("seek", SEEK)
    await alice.ok("match", {"to": "BOBBY", "variant": "shoshogi", "tc": DAYS})
    to_carol = await alice.ok("match", {"to": "carol", "variant": "shoshogi", "tc": DAYS})
    # Withdrawn before anyone saw it: gone from the store too.
    await alice.ok("withdraw", {"id": to_carol["challenge"]})
    await _stored_soon(app, [("alice", ""), ("alice", "bobby")])
    tokens: dict[str, Any] = {"alice": alice.token}
    await app.stop()

    again = await start_app(database_url=app.settings.database_url, ics=True)
    listed = [(s["player"]["name"], s["tc"]) for s in _views(again)]
    # ICS tells the challenge at login.
    telnet = await IcsClient.open(again.ics_port)
    await telnet.send("bobby")
    await telnet.send("correct horse")
    await telnet.expect(r"^\*\*\*\* Starting FICS session as bobby \*\*\*\*$")
    await telnet.expect(r"^Challenge: alice \(\S+\) bobby \(\S+\) unrated shoshogi ")
    await telnet.close()
    assert listed == [("alice", DAYS)]
    bob = await open_client(again)
    assert (await bob.login("bobby"))["t"] == "welcome"
    assert bob.hello is not None
    waiting = bob.hello["d"]["challenges"]
    assert [(c["from"]["name"], c["to"]["name"], c["tc"]) for c in waiting] == [
        ("alice", "bobby", DAYS)
    ]
    carol = await open_client(again)
    assert (await carol.login("carol"))["t"] == "welcome"
    assert carol.hello is not None and carol.hello["d"]["challenges"] == []
    # Accepted with the challenger offline; carol takes the seek.
    game_id = (await bob.ok("accept", {"id": waiting[0]["id"]}))["game"]
    seek_id = (await carol.ok("sought"))["seeks"][0]["id"]
    other_id = (await carol.ok("play", {"id": seek_id}))["game"]
    await _stored_soon(again, [])
    alice = await _resumed(again, open_client, tokens["alice"])
    assert alice.hello is not None
    assert alice.hello["d"]["correspondence"] == sorted([game_id, other_id])
    assert alice.hello["d"]["seeks"] == [] and alice.hello["d"]["challenges"] == []


async def test_a_bot_finds_a_challenge_made_while_it_was_away(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    bot = await make_bot(app, open_client, "robo")
    alice = await _registered(app, open_client, "alice")
    await alice.ok("match", {"to": "robo", "variant": "minishogi", "tc": DAYS})
    await app.stop()
    again = await start_app(database_url=app.settings.database_url)
    bot = Bot(again, "robo", bot.token)
    events = await bot.events()
    shown = (await events.next("challenge"))["challenge"]
    assert shown["challenger"]["name"] == "alice" and shown["destUser"]["name"] == "robo"
    assert shown["timeControl"] == {"type": "correspondence", "daysPerTurn": 3}
    await call(bot.client.bots.accept_challenge, shown["id"])
    started = await events.next("gameStart")
    assert started["game"]["speed"] == "correspondence"


async def test_limits_and_someone_elses_seek_are_refused_and_change_nothing(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(max_correspondence_seeks=2, max_correspondence_challenges=1)
    for name in ("bobby", "carol"):
        await _gone(app, await _registered(app, open_client, name))
    alice = await _registered(app, open_client, "alice")
    dave = await _registered(app, open_client, "dave")  # the honest player beside
    mine = [(await alice.ok("seek", SEEK))["seek"] for _ in range(2)]
    await alice.ok("match", {"to": "bobby", "variant": "shoshogi", "tc": DAYS})
    await _stored_soon(app, [("alice", ""), ("alice", ""), ("alice", "bobby")])
    before = (await _stored(app), [s["id"] for s in _views(app)])
    refused = await alice.request("seek", SEEK)
    assert refused["t"] == "error" and refused["d"]["code"] == "seek_limit"
    assert "2 open correspondence seeks" in refused["d"]["message"]
    refused = await alice.request("match", {"to": "carol", "variant": "shoshogi", "tc": DAYS})
    assert refused["t"] == "error" and refused["d"]["code"] == "challenge_limit"
    assert "1 open correspondence challenges" in refused["d"]["message"]
    refused = await dave.request("unseek", {"id": mine[0]})
    assert refused["t"] == "error" and refused["d"]["code"] == "no_such_seek"
    refused = await dave.request("match", {"to": "nobody", "variant": "shoshogi", "tc": DAYS})
    assert refused["t"] == "error" and refused["d"]["code"] == "no_such_player"
    assert refused["d"]["message"] == "There is no player named 'nobody'."
    assert (await _stored(app), [s["id"] for s in _views(app)]) == before
    # The real-time seeks keep their own limit, and vanish with the connection.
    await alice.ok(
        "seek", {"variant": "minishogi", "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0}}
    )
    await dave.ok("seek", {**SEEK, "variant": "shoshogi"})  # the honest player is served
    await _gone(app, alice)
    owners = sorted(s["player"]["name"] for s in _views(app))
    assert owners == ["alice", "alice", "dave"]
    # Cancelled by its owner: gone from the lobby and the store.
    back = await _resumed(app, open_client, alice.token)
    assert back.hello is not None and [s["id"] for s in back.hello["d"]["seeks"]] == mine
    assert (await back.ok("unseek", {"id": mine[0]}))["removed"] == [mine[0]]
    await _stored_soon(app, [("alice", ""), ("alice", "bobby"), ("dave", "")])


def _held(
    monkeypatch: pytest.MonkeyPatch, app: App, method: str
) -> tuple[asyncio.Event, asyncio.Event]:
    """Hold the store's real ``method`` at its start (a test hook, the database untouched):
    ``started`` is set when a write begins, the write goes on once ``gate`` is set."""
    started, gate = asyncio.Event(), asyncio.Event()
    write: Callable[[Any], Awaitable[Any]] = getattr(app.store, method)

    async def held(argument: Any) -> Any:
        started.set()
        await gate.wait()
        return await write(argument)

    monkeypatch.setattr(app.store, method, held)
    return started, gate


async def test_the_ack_comes_after_the_write(
    start_app: StartApp, open_client: OpenClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await start_app()
    await _gone(app, await _registered(app, open_client, "bobby"))
    alice = await _registered(app, open_client, "alice")
    commands = [
        ("seek", SEEK, [("alice", "")]),
        (
            "match",
            {"to": "bobby", "variant": "shoshogi", "tc": DAYS},
            [("alice", ""), ("alice", "bobby")],
        ),
    ]
    started, gate = _held(monkeypatch, app, "add_offer")
    answers: dict[str, Any] = {}
    for command, data, rows in commands:
        started.clear()
        gate.clear()
        await alice.send(command, data, ack=command)
        await started.wait()
        # The sentinel's answer arrives, the command's does not: its row is not written yet.
        assert all(m.get("a") != command for m in await alice.settled())
        gate.set()
        answer = await alice.next(lambda m, c=command: m.get("a") == c)  # type: ignore[misc]
        assert answer["t"] == "ack"
        assert await _stored(app) == rows  # at the ack, no waiting
        answers[command] = answer["d"]
    # Withdrawn: answered once the row is deleted.
    started, gate = _held(monkeypatch, app, "delete_offer")
    await alice.send("unseek", {"id": answers["seek"]["seek"]}, ack="unseek")
    await started.wait()
    assert all(m.get("a") != "unseek" for m in await alice.settled())
    gate.set()
    assert (await alice.next(lambda m: m.get("a") == "unseek"))["t"] == "ack"
    assert await _stored(app) == [("alice", "bobby")]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_failed_write_answers_an_error_and_opens_nothing(
    start_app: StartApp, open_client: OpenClient, backend: str
) -> None:
    app = await start_app(backend)
    await _gone(app, await _registered(app, open_client, "bobby"))
    alice = await _registered(app, open_client, "alice")
    carol = await _registered(app, open_client, "carol")  # watches the lobby
    assert (await carol.ok("sought", {"watch": True}))["seeks"] == []
    # A real failure: the table is gone (renamed away) under the running server.
    async with app.store.engine.begin() as connection:
        await connection.execute(text("ALTER TABLE offers RENAME TO offers_away"))
    refused = await alice.request("seek", SEEK)
    assert refused["t"] == "error" and refused["d"]["code"] == "offer_not_saved"
    refused = await alice.request("match", {"to": "bobby", "variant": "shoshogi", "tc": DAYS})
    assert refused["t"] == "error" and refused["d"]["code"] == "offer_not_saved"
    assert alice.player is not None
    assert app.hub.seeks() == [] and app.hub.state.challenges.involving(alice.player["id"]) == []
    assert [m["t"] for m in await carol.settled()] == ["seek_added", "seek_removed"]
    assert (await carol.ok("sought"))["seeks"] == []
    async with app.store.engine.begin() as connection:
        await connection.execute(text("ALTER TABLE offers_away RENAME TO offers"))
    assert await _stored(app) == []
    # The store back, the same seek is made and stored; the honest player's too.
    await alice.ok("seek", SEEK)
    await carol.ok("seek", {**SEEK, "variant": "shoshogi"})
    assert await _stored(app) == [("alice", ""), ("carol", "")]


async def _account_id(app: App, name: str) -> int:
    account = await app.store.player_by_name(name)
    assert account is not None
    return account.id


async def test_an_absent_seekers_limit_counts_the_games_the_store_lists(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """Taking the stored seek of a player away counts the player's running correspondence
    games as the store lists them, not only those in memory: at the limit (1 here) the taker
    is refused ``player_busy`` and the seek stays, stored; the seek of another player away,
    below the limit, is taken."""
    app = await start_app(max_correspondence_games=1)
    await _gone(app, await _registered(app, open_client, "carol"))
    alice = await _registered(app, open_client, "alice")
    dave = await _registered(app, open_client, "dave")
    bob = await _registered(app, open_client, "bobby")
    alices = (await alice.ok("seek", SEEK))["seek"]
    daves = (await dave.ok("seek", {**SEEK, "variant": "shoshogi"}))["seek"]
    await _gone(app, alice)
    await _gone(app, dave)
    # A running game of alice's that no hub holds (as a cold one after a restart).
    await app.store.create_game(
        variant="minishogi",
        start_fen=get_variant("minishogi").start_fen,
        time_control=Correspondence(3),
        first_name="alice",
        second_name="carol",
        first_player_id=await _account_id(app, "alice"),
        second_player_id=await _account_id(app, "carol"),
        started=True,
    )
    await _stored_soon(app, [("alice", ""), ("dave", "")])
    refused = await bob.request("play", {"id": alices})
    assert refused["t"] == "error" and refused["d"]["code"] == "player_busy"
    assert refused["d"]["message"] == "alice plays 1 correspondence games, the most at once."
    assert [s["id"] for s in (await bob.ok("sought"))["seeks"]] == [alices, daves]
    assert await _stored(app) == [("alice", ""), ("dave", "")]
    game_id = (await bob.ok("play", {"id": daves}))["game"]
    assert (await bob.next("game_start"))["d"]["game"] == game_id
    assert [s["id"] for s in (await bob.ok("sought"))["seeks"]] == [alices]
    # Deleted with the game's row, in its transaction: gone at the game's start.
    assert await _stored(app) == [("alice", "")]


async def test_a_game_not_written_leaves_its_seek_open_and_stored(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """A game whose row cannot be written (the table renamed away under the running server)
    leaves the stored seek it answered: open again, listed, still stored. With its owner away,
    the owner's games cannot be listed either: ``unavailable``, nothing changed. Taken once
    the store is back, the seek's row is gone at the game's start."""
    app = await start_app()
    alice = await _registered(app, open_client, "alice")
    bob = await _registered(app, open_client, "bobby")
    seek_id = (await alice.ok("seek", SEEK))["seek"]
    await bob.ok("sought", {"watch": True})
    async with app.store.engine.begin() as connection:
        await connection.execute(text("ALTER TABLE games RENAME TO games_away"))
    await bob.ok("play", {"id": seek_id})
    assert (await bob.next("error"))["d"]["code"] == "game_not_created"
    assert (await bob.next("seek_added"))["d"]["id"] == seek_id
    assert [s["id"] for s in (await bob.ok("sought"))["seeks"]] == [seek_id]
    assert await _stored(app) == [("alice", "")]
    await _gone(app, alice)
    refused = await bob.request("play", {"id": seek_id})
    assert refused["t"] == "error" and refused["d"]["code"] == "unavailable"
    assert [s["id"] for s in (await bob.ok("sought"))["seeks"]] == [seek_id]
    async with app.store.engine.begin() as connection:
        await connection.execute(text("ALTER TABLE games_away RENAME TO games"))
    game_id = (await bob.ok("play", {"id": seek_id}))["game"]
    assert (await bob.next("game_start"))["d"]["game"] == game_id
    assert await _stored(app) == []


async def test_a_single_process_answers_the_offers_a_cluster_left(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """Rows a cluster's node held (``offers.node`` named) are the single process's once it
    starts: a game answers only the rows its process holds, so without taking them over at
    start-up the seek would be listed and never playable."""
    app = await start_app()
    alice = await _registered(app, open_client, "alice")
    await alice.ok("seek", SEEK)
    await _gone(app, alice)
    await _stored_soon(app, [("alice", "")])
    async with app.store.engine.begin() as connection:
        await connection.execute(text("UPDATE offers SET node = 'node-gone:1a2b'"))
    await app.stop()

    again = await start_app(database_url=app.settings.database_url)
    bob = await _registered(again, open_client, "bobby")
    seek_id = (await bob.ok("sought"))["seeks"][0]["id"]
    game_id = (await bob.ok("play", {"id": seek_id}))["game"]
    assert (await bob.next("game_start"))["d"]["game"] == game_id
    await _stored_soon(again, [])
    assert (await again.store.get_game(game_id)).status == "started"

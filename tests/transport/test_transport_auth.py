"""Identity over the websocket: register, login, guests, session resumption, bad credentials."""

from __future__ import annotations

import pytest
from support import poll
from websockets.exceptions import ConnectionClosed
from ws_support import OpenClient, StartApp, start_game

from server.hub.identity import Rating

BACKENDS = ["sqlite", "postgresql"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_register_then_login_and_resume_with_the_session_token(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    alice = await open_client(app)
    welcome = await alice.register("Alice", "correct horse")
    assert welcome["t"] == "welcome"
    player = welcome["d"]["player"]
    assert player["name"] == "Alice" and player["guest"] is False
    first_token = welcome["d"]["token"]
    assert len(first_token) >= 40
    assert app.hub.online(player["id"])

    again = await open_client(app)
    login = await again.login("alice", "correct horse")  # names are case-insensitive
    assert login["t"] == "welcome"
    assert login["d"]["player"] == player
    assert login["d"]["token"] != first_token

    resumed = await open_client(app)
    answer = await resumed.resume(first_token)
    assert answer["t"] == "welcome" and answer["d"]["player"] == player
    stored = await app.store.player_by_name("Alice")
    assert stored is not None and stored.password_hash.startswith("$argon2id$")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_bad_credentials_are_refused_and_change_nothing(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    owner = await open_client(app)
    await owner.register("Bobby", "right password")
    client = await open_client(app)
    for name, password in (("Bobby", "wrong password"), ("Nobody", "right password")):
        answer = await client.request("login", {"name": name, "password": password})
        assert answer["t"] == "error"
        assert answer["d"] == {"code": "bad_credentials", "message": "Wrong name or password."}
    answer = await client.request("resume", {"token": "not-a-session"})
    assert answer["d"]["code"] == "bad_session"
    taken = await client.request("register", {"name": "BOBBY", "password": "another one"})
    assert taken["d"]["code"] == "name_taken"
    bad_name = await client.request("register", {"name": "x", "password": "long enough"})
    assert bad_name["d"]["code"] == "invalid_name"
    reserved = await client.request("register", {"name": "Guest-1", "password": "long enough"})
    assert reserved["d"]["code"] == "invalid_name"
    computer = await client.request("register", {"name": "COMPUTER", "password": "long enough"})
    assert computer["d"]["code"] == "invalid_name"  # the computer player's name
    short = await client.request("register", {"name": "Carol", "password": "short"})
    assert short["d"]["code"] == "invalid_password"
    # Still anonymous: hub commands are refused, and no player was created.
    refused = await client.request("sought")
    assert refused["d"]["code"] == "not_authenticated"
    assert await app.store.player_by_name("Carol") is None
    assert await app.store.player_by_name("Nobody") is None
    # The connection still works: a correct login succeeds.
    assert (await client.login("Bobby", "right password"))["t"] == "welcome"


async def test_guests_get_distinct_names_and_play_casual_only(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    one, two = await open_client(app), await open_client(app)
    first = await one.guest()
    second = await two.guest()
    assert first["d"]["player"]["guest"] is True
    assert first["d"]["player"]["name"].startswith("Guest-")
    assert first["d"]["player"]["id"] != second["d"]["player"]["id"]
    rated = await one.request(
        "seek",
        {
            "variant": "minishogi",
            "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0},
            "rated": True,
        },
    )
    assert rated["d"]["code"] == "guests_casual_only"
    assert app.hub.seeks() == []
    # A guest resumes with its token while the process lives.
    assert one.token is not None
    back = await open_client(app)
    assert (await back.resume(one.token))["d"]["player"] == first["d"]["player"]


async def test_the_player_is_who_the_session_says_not_a_name_the_client_sends(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    client = await open_client(app)
    await client.register("Mallory")
    again = await client.request("login", {"name": "Mallory", "password": "correct horse"})
    assert again["d"]["code"] == "already_authenticated"
    # A frame cannot claim another identity: unknown fields are refused.
    sneaky = await client.request("sought", {"as": "alice"})
    assert sneaky["t"] == "error" and sneaky["d"]["code"] == "bad_request"


async def test_logout_ends_the_session(start_app: StartApp, open_client: OpenClient) -> None:
    app = await start_app()
    client = await open_client(app)
    await client.register("Trudy")
    token = client.token
    assert token is not None
    assert (await client.ok("logout")) == {"logged_out": True}
    with pytest.raises(ConnectionClosed) as closed:
        await client.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000
    later = await open_client(app)
    assert (await later.request("resume", {"token": token}))["d"]["code"] == "bad_session"


async def test_ratings_are_loaded_from_the_store_at_login(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    alice, bob = await open_client(app), await open_client(app)
    await alice.register("Alice")
    await bob.register("Bob")
    game = await start_game(alice, bob, rated=True)
    loser = game.mover()
    await loser.ok("resign", {"game": game.id})
    end = await game.end()
    assert end["d"]["termination"] == "resignation"
    winner_id = game.other(loser).player["id"]  # type: ignore[index]
    pool = ("minishogi", "bullet")

    async def stored_rating() -> Rating | None:
        for rating in await app.store.player_ratings(int(winner_id[1:])):
            if (rating.variant, rating.speed) == pool:
                return rating.rating
        return None

    rating = await poll(stored_rating, lambda rating: rating is not None)
    assert rating is not None and rating.rating > 1500
    # A new login sees the stored rating (in the seek it posts).
    client = await open_client(app)
    winner = game.other(loser)
    await client.login(winner.player["name"])  # type: ignore[index]
    await client.ok("sought", {"watch": True})
    seek = await client.ok(
        "seek", {"variant": "minishogi", "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0}}
    )
    posted = [s for s in app.hub.seeks() if s.id == seek["seek"]]
    assert posted and round(posted[0].player.rating("minishogi", "bullet").rating) == round(
        rating.rating
    )


async def test_unauthenticated_connections_are_closed_after_a_timeout(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(login_timeout_s=0.2)
    client = await open_client(app)
    with pytest.raises(ConnectionClosed) as closed:
        await client.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    assert closed.value.rcvd.reason == "authentication timeout"


async def test_repeated_failed_logins_close_the_connection(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    client = await open_client(app)
    for attempt in range(4):
        answer = await client.request("login", {"name": "Eve", "password": f"guess {attempt}"})
        assert answer["d"]["code"] == "bad_credentials"
    await client.send("login", {"name": "Eve", "password": "guess 5"})
    with pytest.raises(ConnectionClosed):
        await client.quiet(5)
        await client.recv(5)
    assert client.ws.close_code == 1008 and client.ws.close_reason == "too many failed logins"


async def test_ping_is_answered_with_pong_before_and_after_login(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """The browser's application heartbeat: ``ping`` is answered at once, logged in or not."""
    app = await start_app("sqlite")
    client = await open_client(app)
    answer = await client.request("ping")
    assert answer["t"] == "pong" and answer["d"] == {}
    bad = await client.request("ping", {"extra": 1})
    assert bad["t"] == "error" and bad["d"]["code"] == "bad_request"
    await client.register("Pinger", "correct horse")
    await client.send("ping")  # without an ack id: answered all the same
    assert (await client.next("pong"))["d"] == {}
    answer = await client.request("ping")
    assert answer["t"] == "pong"

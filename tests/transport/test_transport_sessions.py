"""Login sessions against a live server: they expire after ``session_max_idle_days`` unused
(``last_seen`` aged in the real database, no sleeping), ``logout_everywhere`` and
``change_password`` end the others; guests' names are unique; the SQLite file is private."""

from __future__ import annotations

import stat
from datetime import timedelta
from pathlib import Path

import aiohttp
import pytest
from ics_support import IcsClient
from websockets.exceptions import ConnectionClosed
from ws_support import Client, OpenClient, StartApp, settings_for

import server.transport.accounts as accounts_module
from server.app import App
from server.store.migrate import upgrade_to_head
from server.store.records import utc_now
from server.store.schema import sessions
from server.transport.accounts import Accounts

BACKENDS = ["sqlite", "postgresql"]


async def closed_with(client: Client) -> tuple[int, str]:
    """Read until the server closes; its close code and reason."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await client.recv()
    frame = closed.value.rcvd
    assert frame is not None
    return frame.code, frame.reason


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_session_unused_for_max_idle_has_ended(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend, session_max_idle_days=30)
    alice = await open_client(app)
    await alice.register("Alice", "correct horse")
    old, fresh = alice.token, (await (await open_client(app)).login("Alice"))["d"]["token"]
    await age_sessions(app, days=31)
    refused = await (await open_client(app)).request("resume", {"token": old})
    assert refused["d"]["code"] == "bad_session"
    async with aiohttp.ClientSession() as http:
        headers = {"Authorization": f"Bearer {fresh}"}
        async with http.get(f"http://127.0.0.1:{app.port}/api/account", headers=headers) as r:
            assert r.status == 401  # the HTTP API reads sessions the same way
    async with app.store.engine.connect() as connection:
        left = (await connection.execute(sessions.select())).all()
    assert left == []  # an ended session is deleted when presented
    # A session used within the limit goes on.
    bob = await open_client(app)
    await bob.register("Bob", "correct horse")
    await age_sessions(app, days=29)
    assert bob.token is not None
    assert (await (await open_client(app)).resume(bob.token))["t"] == "welcome"


async def age_sessions(app: App, days: int) -> None:
    """Every session was last used ``days`` ago (in the real database)."""
    async with app.store.engine.begin() as connection:
        await connection.execute(
            sessions.update().values(last_seen=utc_now() - timedelta(days=days))
        )


async def test_logout_everywhere_ends_every_session_and_closes_the_connections(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    phone, laptop = await open_client(app), await open_client(app)
    await phone.register("Carol", "correct horse")
    await laptop.login("Carol", "correct horse")
    spare = (await (await open_client(app)).login("Carol", "correct horse"))["d"]["token"]
    bystander = await open_client(app)
    await bystander.register("Dave", "correct horse")
    account = f"http://127.0.0.1:{app.port}/api/account"
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {spare}"}) as http:
        async with http.get(account) as answer:
            assert answer.status == 200  # the HTTP API now holds the token in its cache
        assert (await phone.ok("logout_everywhere")) == {"logged_out": True}
        async with http.get(account) as answer:
            assert answer.status == 401  # forgotten at once, not after the cache's seconds
    assert await closed_with(phone) == (1000, "logged out")
    assert await closed_with(laptop) == (1000, "session ended elsewhere")
    for token in (phone.token, laptop.token, spare):
        answer = await (await open_client(app)).request("resume", {"token": token})
        assert answer["d"]["code"] == "bad_session"
    assert bystander.token is not None
    assert (await (await open_client(app)).resume(bystander.token))["t"] == "welcome"
    assert (await bystander.request("ping"))["t"] == "pong"  # still connected


async def test_change_password_ends_the_other_sessions(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(ics=True)
    here, there = await open_client(app), await open_client(app)
    await here.register("Erin", "old password")
    await there.login("Erin", "old password")
    wrong = await here.request("change_password", {"old": "not it", "new": "new password"})
    assert wrong["d"]["code"] == "bad_credentials"
    short = await here.request("change_password", {"old": "old password", "new": "short"})
    assert short["d"]["code"] == "invalid_password"
    answer = await here.ok("change_password", {"old": "old password", "new": "new password"})
    assert answer == {"sessions_ended": 1}
    assert await closed_with(there) == (1000, "session ended elsewhere")
    assert (await here.request("ping"))["t"] == "pong"  # this connection and session go on
    assert here.token is not None
    assert (await (await open_client(app)).resume(here.token))["t"] == "welcome"
    old = await (await open_client(app)).request(
        "login", {"name": "Erin", "password": "old password"}
    )
    assert old["d"]["code"] == "bad_credentials"
    assert (await (await open_client(app)).login("Erin", "new password"))["t"] == "welcome"
    guest = await open_client(app)
    await guest.guest()
    refused = await guest.request("change_password", {"old": "whatever1", "new": "whatever2"})
    assert refused["d"]["code"] == "bad_session"


async def test_guest_names_are_long_and_never_shared_in_one_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    accounts = Accounts(None, None)  # type: ignore[arg-type]  # guests need neither
    name = accounts.guest().info.name
    assert len(name) == 16 and name.startswith("Guest-") and name[6:].isalnum()
    # Two guests draw the same name: the second draws again.
    draws = iter(["Guest-aaaaaaaaaa", "Guest-aaaaaaaaaa", "Guest-bbbbbbbbbb"])
    monkeypatch.setattr(accounts_module, "guest_name", lambda: next(draws))
    one, two = accounts.guest(), accounts.guest()
    assert (one.info.name, two.info.name) == ("Guest-aaaaaaaaaa", "Guest-bbbbbbbbbb")
    await accounts.logout(one.token)  # the name is free again
    monkeypatch.setattr(accounts_module, "guest_name", lambda: "Guest-aaaaaaaaaa")
    assert accounts.guest().info.name == "Guest-aaaaaaaaaa"


async def test_the_sqlite_database_and_worker_key_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    url = f"sqlite+aiosqlite:///{data / 'hub.sqlite3'}"
    await upgrade_to_head(url)
    key_file = data / "worker.key"
    settings = settings_for(
        url, journal_dir=str(tmp_path / "journal"), worker_keys="", worker_key_file=str(key_file)
    )
    app = App(settings)
    await app.start()
    try:
        client = await Client.open(app.url)
        await client.register("Frank", "correct horse")  # a write: the WAL exists
        await client.close()
        modes = {
            path.name: stat.S_IMODE(path.stat().st_mode)
            for path in data.iterdir()
            if path.name.startswith("hub.sqlite3")
        }
        assert "hub.sqlite3-wal" in modes and set(modes.values()) == {0o600}, modes
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    finally:
        await app.stop()
    # A database file left world-readable by an older version is made private at start.
    (data / "hub.sqlite3").chmod(0o644)
    await upgrade_to_head(url)
    assert stat.S_IMODE((data / "hub.sqlite3").stat().st_mode) == 0o600


async def ics_login(app: App, name: str, password: str) -> IcsClient:
    telnet = await IcsClient.open(app.ics_port)
    await telnet.send(name)
    await telnet.send(password)
    await telnet.expect(rf"^\*\*\*\* Starting FICS session as {name} \*\*\*\*$")
    return telnet


async def test_ics_password_changes_it_and_ends_the_other_sessions(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(ics=True)
    web = await open_client(app)
    await web.register("Grace", "old password")
    telnet = await ics_login(app, "Grace", "old password")
    try:
        await telnet.send("password wrong-one new-password")
        await telnet.expect(r"^Incorrect password; password not changed!$")
        await telnet.send("password old-password")
        await telnet.expect(r"^Usage: password <oldpassword> <newpassword>$")
        await telnet.send("password short new")  # FICS passwords are single words
        await telnet.expect(r"^Password not changed: A password has 8 to 128 characters\.$")
        # Old password with a space cannot be typed: set one without first.
        assert (await web.ok("change_password", {"old": "old password", "new": "oldpassword"})) == {
            "sessions_ended": 1
        }
        await telnet.expect(r"^Disconnected: your session ended \(logged out elsewhere\)\.")
    finally:
        await telnet.close()
    telnet = await ics_login(app, "Grace", "oldpassword")
    try:
        await telnet.send("password oldpassword newpassword")
        await telnet.expect(r"^Password changed\. Your other sessions \(1\) have ended\.$")
        assert await closed_with(web) == (1000, "session ended elsewhere")
    finally:
        await telnet.close()
    assert (await (await open_client(app)).login("Grace", "newpassword"))["t"] == "welcome"

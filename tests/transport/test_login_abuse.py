"""Password guessing and login floods against a live server, with an honest player beside the
attacker (since cede9d6, 2026-12-06): throttling per address and per account at every door
(websocket, ICS, HTTP token endpoints), registrations per address, failed logins logged, and one
address's guesses never taking the hashing pool from the others.

Other addresses are other loopback addresses (Linux routes 127.0.0.0/8 to lo). Time is moved
through ``app.accounts.clock`` instead of sleeping.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import aiohttp
import pytest
from ics_support import IcsClient
from ws_support import Client, OpenClient, StartApp

from server.app import App

ATTACKER = "127.0.0.2"
HONEST = "127.0.0.1"


class FakeClock:
    """A clock the test moves (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def frozen(app: App) -> FakeClock:
    clock = FakeClock()
    app.accounts.clock = clock
    return clock


async def open_from(open_client: OpenClient, app: App, address: str) -> Client:
    return await open_client(app, local_addr=(address, 0))


class Guesses:
    """Wrong passwords for one account, each from an attacker's connection: how many were
    answered, and an event set at the ``under_way_at``-th answer (the attack is under way)."""

    def __init__(self, name: str, under_way_at: int = 1) -> None:
        self.name = name
        self.answered = 0
        self.under_way = asyncio.Event()
        self._under_way_at = under_way_at

    async def one(self, attacker: Client) -> None:
        answer = await attacker.request("login", {"name": self.name, "password": "wrong guess"})
        assert answer["d"]["code"] == "bad_credentials"
        self.answered += 1
        if self.answered >= self._under_way_at:
            self.under_way.set()


async def test_guesses_back_off_per_address_across_reconnections_and_are_logged(
    start_app: StartApp, open_client: OpenClient, caplog: pytest.LogCaptureFixture
) -> None:
    app = await start_app(login_free_failures_per_address=3, login_free_failures_per_account=50)
    clock = frozen(app)
    owner = await open_client(app)
    await owner.register("Victim", "the real password")
    caplog.set_level(logging.INFO, logger="server.transport.accounts")

    async def guess(name: str = "Victim") -> dict[str, Any]:
        # A new connection each time: reconnecting must not reset anything.
        attacker = await open_from(open_client, app, ATTACKER)
        answer = await attacker.request("login", {"name": name, "password": "guess-1234"})
        await attacker.close()
        return answer["d"]

    for _ in range(3):
        assert (await guess())["code"] == "bad_credentials"
    refused = await guess("Someone")  # another account from the same address: refused too
    assert refused == {
        "code": "too_many_attempts",
        "message": "Too many failed logins; try again in 1 s.",
    }
    clock.now += 1.5
    assert (await guess())["code"] == "bad_credentials"  # the 4th failure: 2 s now
    assert (await guess())["message"] == "Too many failed logins; try again in 2 s."
    # The honest player, from another address, logs in at once.
    honest = await open_client(app)
    assert (await honest.login("Victim", "the real password"))["t"] == "welcome"
    failures = [r for r in caplog.records if r.getMessage().startswith("failed login")]
    assert len(failures) == 4 and all(r.levelno == logging.WARNING for r in failures)
    assert failures[0].getMessage() == f"failed login as 'Victim' from {ATTACKER}"
    assert "guess-1234" not in caplog.text


async def test_account_back_off_spares_the_owner_where_they_logged_in_before(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """Guesses on one account from several addresses hold back new addresses, not the owner's
    (an attacker cannot lock the owner out); the owner's own typos count apart."""
    app = await start_app(login_free_failures_per_account=3)
    frozen(app)
    owner = await open_client(app)
    await owner.register("Owner", "owner password")
    for address in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
        attacker = await open_from(open_client, app, address)
        answer = await attacker.request("login", {"name": "owner", "password": "wrong guess"})
        assert answer["d"]["code"] == "bad_credentials"
    stranger = await open_from(open_client, app, "127.0.0.5")
    answer = await stranger.request("login", {"name": "OWNER", "password": "owner password"})
    assert answer["d"]["code"] == "too_many_attempts"  # even the right password, from there
    # The owner, from the address they registered from: served.
    again = await open_client(app)
    assert (await again.login("Owner", "owner password"))["t"] == "welcome"
    # A success cleared the account's counter: the new address may try again.
    assert (await stranger.login("Owner", "owner password"))["t"] == "welcome"


async def test_every_door_shares_the_throttle(start_app: StartApp, open_client: OpenClient) -> None:
    """The websocket, ICS and HTTP token endpoints count on the same throttle: three wrong
    passwords over HTTP on one kept-alive connection, then every door is refused before hashing
    (HTTP 429 with Retry-After, an ICS line, a websocket error); the honest player is served."""
    app = await start_app(ics=True, login_free_failures_per_address=3)
    frozen(app)
    owner = await open_client(app)
    await owner.register("Tokenowner", "owner password")
    url = f"http://127.0.0.1:{app.port}/api/token/list"
    connector = aiohttp.TCPConnector(local_addr=(ATTACKER, 0), limit=1)
    async with aiohttp.ClientSession(connector=connector) as http:
        statuses = []
        for _ in range(4):
            form = {"name": "Tokenowner", "password": "wrong guess"}
            async with http.post(url, data=form) as response:
                statuses.append((response.status, response.headers.get("Retry-After")))
                body = await response.json()
        assert statuses == [(401, None), (401, None), (401, None), (429, "1")]
        assert body == {"error": "Too many failed logins; try again in 1 s."}
    ics = await IcsClient.open(app.ics_port, local_addr=(ATTACKER, 0))
    try:
        await ics.send("Tokenowner")
        await ics.expect("password:")
        await ics.send("another guess")
        await ics.expect(r"^\*\*\*\* Too many failed logins; try again in 1 s\. \*\*\*\*")
    finally:
        await ics.close()
    attacker = await open_from(open_client, app, ATTACKER)
    answer = await attacker.request("login", {"name": "Tokenowner", "password": "owner password"})
    assert answer["d"]["code"] == "too_many_attempts"
    # The honest owner, from their own address, lists their tokens with the password.
    async with aiohttp.ClientSession() as http:
        form = {"name": "Tokenowner", "password": "owner password"}
        async with http.post(url, data=form) as response:
            assert response.status == 200 and await response.json() == {"tokens": []}


async def test_registrations_are_limited_per_address(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(registrations_per_address_per_hour=2)
    for number in range(2):
        client = await open_from(open_client, app, ATTACKER)
        await client.register(f"Spam{number}", "long enough")
    client = await open_from(open_client, app, ATTACKER)
    answer = await client.request("register", {"name": "Spam2", "password": "long enough"})
    assert answer["d"] == {
        "code": "too_many_attempts",
        "message": "Too many registrations from your address (at most 2 an hour); "
        "try again in 1800 s.",
    }
    assert await app.store.player_by_name("Spam2") is None
    honest = await open_client(app)
    assert (await honest.register("Honest", "long enough"))["t"] == "welcome"


async def test_guesses_from_one_address_leave_the_hashing_pool_to_the_others(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """40 connections from one address send wrong passwords at once (no back-off, to make them
    all hash): their hashes run one at a time, so an honest login from another address gets a
    slot at once and is answered while most of the guesses still wait."""
    app = await start_app(
        argon2_time_cost=2,
        argon2_memory_kib=16384,  # ~15 ms a hash: measurable, cheap
        login_free_failures_per_address=1000,
        login_free_failures_per_account=1000,
    )
    owner = await open_client(app)
    await owner.register("Honest", "honest password")
    started = time.perf_counter()
    await (await open_client(app)).login("Honest", "honest password")
    alone = time.perf_counter() - started
    attackers = await asyncio.gather(*(open_from(open_client, app, ATTACKER) for _ in range(40)))
    guesses = Guesses("Honest")
    honest = await open_client(app)  # open before: its login is what is measured
    tasks = [asyncio.create_task(guesses.one(attacker)) for attacker in attackers]
    await guesses.under_way.wait()
    started = time.perf_counter()
    assert (await honest.login("Honest", "honest password"))["t"] == "welcome"
    under_attack = time.perf_counter() - started
    still_waiting = 40 - guesses.answered
    await asyncio.gather(*tasks)
    assert still_waiting >= 20, (alone, under_attack, still_waiting)
    assert under_attack < max(1.0, 10 * alone), (alone, under_attack)


async def test_guesses_from_many_addresses_queue_behind_a_known_login(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """Sixteen addresses guess at once (no back-off, one hash each at a time): more waiting
    hashes than the pool has slots. The owner, from the address they registered from, goes
    first in line: answered while the guesses that were queued before it still wait."""
    app = await start_app(
        argon2_time_cost=2,
        argon2_memory_kib=16384,
        login_free_failures_per_address=1000,
        login_free_failures_per_account=1000,
    )
    owner = await open_client(app)
    await owner.register("Honest", "honest password")
    addresses = [f"127.0.0.{n}" for n in range(2, 18)]
    attackers = await asyncio.gather(
        *(open_from(open_client, app, address) for address in addresses for _ in range(2))
    )
    for attacker in attackers[::2]:  # every address has failed before (a sustained attack)
        await Guesses("Honest").one(attacker)
    honest = await open_client(app)  # open before: its login is what is measured
    guesses = Guesses("Honest", under_way_at=4)  # every guess's frame has arrived
    tasks = [asyncio.create_task(guesses.one(attacker)) for attacker in attackers]
    await guesses.under_way.wait()
    before = guesses.answered
    assert (await honest.login("Honest", "honest password"))["t"] == "welcome"
    during = guesses.answered - before
    await asyncio.gather(*tasks)
    # Only the hashes already running (one a slot) and the ones that took the slots freed
    # while the owner's login ran finished meanwhile (first in line, FIFO would have put it
    # behind the 16 addresses' queued ones).
    assert during <= 6, during

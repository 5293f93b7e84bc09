"""The mailer (server/transport/mail.py) with a real SQLite store claiming its mails and a real
SMTP server: a server down, then up (retried with back-off, the failure logged once, the mail
delivered once); a turn held back by the hour, mailed at its end if still the player's turn."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from smtp_support import SmtpServer, smtp_server

from server.rules import MoveRecord
from server.rules.time_control import Correspondence
from server.store import Store
from server.store.migrate import upgrade_to_head
from server.transport.mail import MailConfig, Mailer, MailJob


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _config(port: int) -> MailConfig:
    return MailConfig(
        host="127.0.0.1",
        port=port,
        sender="hub@test.example",
        security="none",
        user="",
        password="",
        timeout_s=5.0,
        window_s=3600.0,
        daily_cap=10,
        queue_limit=10,
        attempts=8,
        retry_base_s=0.5,
        retry_max_s=1.0,
        sweep_s=60.0,
        public_url="https://hub.example",
    )


async def _new_game(store: Store, alice: int) -> str:
    return await store.create_game(
        variant="minishogi",
        start_fen="rbsgk/4p/5/P4/KGSBR[] w 0 1",
        time_control=Correspondence(1),
        first_name="alice",
        second_name="bob",
        first_player_id=alice,
        started=True,
    )


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'mail.sqlite3'}"
    await upgrade_to_head(url)
    async with Store.from_url(url) as opened:
        yield opened


async def test_a_mail_server_down_then_up(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    alice = (await store.create_player("alice", "hash")).id
    game = await _new_game(store, alice)
    await store.set_mail_settings(alice, email="alice@example.org", opt_in=True)
    port = _free_port()  # nothing listens there yet: connections are refused
    delays: list[float] = []
    up: list[Any] = []
    ready = asyncio.Event()

    async def sleep(delay: float) -> None:
        # The mailer's back-off, observed instead of waited: after the third failure the
        # SMTP server comes up on the port the mailer keeps trying.
        delays.append(delay)
        if len(delays) == 3:
            up.append(smtp_server(port))
            up.append(await up[0].__aenter__())
            ready.set()

    mailer = Mailer(_config(port), store, sleep=sleep)
    caplog.set_level(logging.DEBUG, logger="server.transport.mail")
    mailer.start()
    job = MailJob(alice, "alice", "bob", game, "minishogi", False, None, 0)
    mailer.submit(job)
    await asyncio.wait_for(ready.wait(), 10)
    smtp: SmtpServer = up[1]
    mail = await smtp.next()
    assert mail.recipients == ["alice@example.org"]
    assert delays == [0.5, 1.0, 1.0]
    mailer.submit(job)  # the same turn again: within the hour, claimed by nobody
    mailer.submit(MailJob(alice, "alice", "bob", game, "minishogi", True, "1-0", 0))
    ended = await smtp.next()
    assert ended.message["Subject"] == "Game over against bob: you won"
    await mailer.drained()
    assert smtp.pending() == 0 and mailer.sent == 2
    await mailer.close()
    await up[0].__aexit__(None, None, None)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "a***@example.org" in warnings[0].getMessage()
    assert all("alice@example.org" not in r.getMessage() for r in caplog.records)
    assert any(r.getMessage() == "mail sending works again" for r in caplog.records)


async def test_a_turn_held_back_by_the_hour_is_mailed_at_its_end(store: Store) -> None:
    alice = (await store.create_player("alice", "hash")).id
    await store.set_mail_settings(alice, email="alice@example.org", opt_in=True)
    waiting, moved_on = await _new_game(store, alice), await _new_game(store, alice)
    clock = [datetime(2026, 12, 7, 10, 0, tzinfo=UTC)]
    async with smtp_server() as smtp:
        mailer = Mailer(_config(smtp.port), store, now=lambda: clock[0])
        mailer.start()
        for game in (waiting, moved_on):
            mailer.submit(MailJob(alice, "alice", "bob", game, "minishogi", False, None, 0))
        assert {(await smtp.next()).message["Subject"] for _ in range(2)} == {
            "Your turn against bob (Mini-Shogi)"
        }
        clock[0] += timedelta(minutes=10)  # her turn again in both: held back by the hour
        for game in (waiting, moved_on):
            mailer.submit(MailJob(alice, "alice", "bob", game, "minishogi", False, None, 0))
        await mailer.drained()
        assert smtp.pending() == 0
        clock[0] += timedelta(minutes=20)
        assert await mailer.sweep() == 0  # not due yet
        # In one game she moves before the hour is over: no mail about it then.
        await store.append_move(moved_on, MoveRecord(1, "a1b2", "K-4d", 0, 0))
        clock[0] += timedelta(minutes=30)
        assert await mailer.sweep() == 1
        mail = await smtp.next()
        assert f"/game/{waiting}" in mail.body
        assert await mailer.sweep() == 0  # taken once
        await mailer.drained()
        assert smtp.pending() == 0 and mailer.sent == 3
        await mailer.close()

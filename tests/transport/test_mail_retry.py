"""The mailer against an SMTP server that is down, then up: retried with back-off, the failure
logged once, the mail delivered once (server/transport/mail.py; a real SQLite store claims)."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path
from typing import Any

import pytest
from smtp_support import SmtpServer, smtp_server

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
        public_url="https://hub.example",
    )


async def test_a_mail_server_down_then_up(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'mail.sqlite3'}"
    await upgrade_to_head(url)
    async with Store.from_url(url) as store:
        alice = (await store.create_player("alice", "hash")).id
        game = await store.create_game(
            variant="minishogi",
            start_fen="rbsgk/4p/5/P4/KGSBR[] w 0 1",
            time_control=Correspondence(1),
            first_name="alice",
            second_name="bob",
            first_player_id=alice,
            started=True,
        )
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

"""Notifications over the websocket: the "your turn" list (``my_games``, pushed ``my_game``),
the e-mail settings, and the mails themselves, sent to a real SMTP server the test starts
(server/transport/notify.py, server/transport/mail.py, docs/correspondence.md)."""

from __future__ import annotations

from typing import Any

from smtp_support import SmtpServer, smtp_server
from ws_support import OpenClient, StartApp, alice_and_bobby, start_game

from server.hub.payload_check import payload_problems

CORR = {"kind": "correspondence", "days": 3}


def _mail_settings(smtp: SmtpServer) -> dict[str, Any]:
    return {
        "mail_enabled": True,
        "mail_host": "127.0.0.1",
        "mail_port": smtp.port,
        "mail_from": "hub@test.example",
        "public_url": "https://hub.example",
        "mail_retry_base_s": 0.05,
    }


async def test_your_turn_list_pushes_and_mails(
    start_app: StartApp, open_client: OpenClient
) -> None:
    async with smtp_server() as smtp:
        app = await start_app(**_mail_settings(smtp))
        alice, bob = await alice_and_bobby(app, open_client)
        assert (await alice.ok("my_games")) == {"games": [], "your_turn": 0, "limit": 300}
        settings = await alice.ok("mail_settings", {"email": "alice@example.org", "opt_in": True})
        assert settings == {"email": "alice@example.org", "opt_in": True, "enabled": True}
        # bob gives an address but does not opt in: he gets nothing
        await bob.ok("mail_settings", {"email": "bob@example.org"})

        # alice plays second, so bob's first move makes it her turn
        game = await start_game(alice, bob, tc=CORR, colour="second")
        assert game.first is bob
        listed = await alice.ok("my_games")
        assert listed["your_turn"] == 0 and [g["game"] for g in listed["games"]] == [game.id]
        entry = listed["games"][0]
        assert (entry["side"], entry["turn"], entry["your_turn"], entry["opponent"]) == (
            "second",
            "first",
            False,
            "bobby",
        )
        assert entry["tc"] == CORR and entry["speed"] == "correspondence"

        await game.play(game.legal[0])
        pushed = await alice.next(lambda m: m["t"] == "my_game" and m["d"]["plies"] == 1)
        assert pushed["d"]["your_turn"] and pushed["d"]["game"] == game.id
        mail = await smtp.next()
        assert mail.recipients == ["alice@example.org"]
        assert mail.message["Subject"] == "Your turn against bobby (Mini-Shogi)"
        assert f"https://hub.example/game/{game.id}" in mail.body
        listed = await alice.ok("my_games")
        assert listed["your_turn"] == 1 and listed["games"][0]["your_turn"]

        # Her turn again within the hour: no second mail about this game. The end's mail is
        # queued after it and sent (the queue is first in, first out), so it proves it.
        await game.play(game.legal[0])
        await game.play(game.legal[0])
        await bob.ok("resign", {"game": game.id})
        ended = await smtp.next()
        assert ended.recipients == ["alice@example.org"]
        assert ended.message["Subject"] == "Game over against bobby: you won"
        assert smtp.pending() == 0
        gone = await alice.next(lambda m: m["t"] == "my_game" and m["d"]["finished"])
        assert gone["d"]["result"] == "0-1"
        assert (await alice.ok("my_games"))["games"] == []
        assert app.mailer is not None
        await app.mailer.drained()
        assert app.mailer.sent == 2
        kinds = {"my_games", "my_game", "mail_settings"}
        seen = [m for client in (alice, bob) for m in client.seen if m["t"] in kinds]
        assert {m["t"] for m in seen} == kinds
        assert [p for m in seen for p in payload_problems(m["t"], m["d"])] == []


BAD_SETTINGS: list[tuple[dict[str, Any], str]] = [
    ({"email": "alice@localhost"}, "e-mail address"),
    ({"email": "a" * 250 + "@x.org"}, "characters"),
    ({"email": "alice@example.org", "forget": True}, "alone"),
    ({"opt_in": "yes"}, "true or false"),
    ({"colour": "red"}, "colour"),
]


async def test_bad_mail_settings_change_nothing(start_app: StartApp, open_client: OpenClient) -> None:
    app = await start_app()
    alice = await open_client(app, "alice")
    await alice.register("alice")
    await alice.ok("mail_settings", {"email": "alice@example.org"})
    for payload, words in BAD_SETTINGS:
        refused = await alice.request("mail_settings", payload)
        assert refused["t"] == "error" and words in refused["d"]["message"], payload
        assert refused["d"]["code"] == "bad_request"
    now = await alice.ok("mail_settings")
    assert now == {"email": "alice@example.org", "opt_in": False, "enabled": False}
    forgotten = await alice.ok("mail_settings", {"forget": True})
    assert forgotten == {"email": None, "opt_in": False, "enabled": False}


async def test_guests_and_strangers_have_no_list(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    stranger = await open_client(app, "stranger")
    refused = await stranger.request("my_games")
    assert refused["d"]["code"] == "not_authenticated"
    guest = await open_client(app, "guest")
    await guest.guest()
    for kind in ("my_games", "mail_settings"):
        refused = await guest.request(kind)
        assert refused["d"]["code"] == "registered_only"

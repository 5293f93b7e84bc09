"""A bot that stops reading its NDJSON stream, against the live server (no mock anywhere): a raw
socket sends the game stream's request, reads up to ``gameFull``, then never reads again, while
the game's chat floods the stream. The server cuts that stream off once its bounded queue is
full (docs/bots.md, "Streams"), holds a bounded amount for it meanwhile, and keeps serving the
others: a sentinel, the same bot's normal stream (berserk), gets every line in order throughout
and after, and the game goes on.
"""

from __future__ import annotations

import asyncio
import socket

from bot_support import call, make_bot
from ws_support import OpenClient, StartApp

from server.transport.http_api.link import MAX_QUEUED, BotLink

FISCHER = {"kind": "fischer", "base_s": 600, "inc_s": 0}
FAST = {"rate_limit_per_s": 100_000.0, "rate_limit_burst": 100_000}
BATCH = 100
"""Chat lines sent before the sentinel must have them all (fewer than the queue's bound)."""
MAX_LINES = 20_000
"""The flood gives up here (~7 MiB of lines): the stream should be cut off long before."""
TEXT = "x" * 290  # with its number, about the longest chat line (300): a chatLine of ~360 bytes
WRITE_BOUND = 2 * 2**16
"""aiohttp waits for the socket to drain once 64 KiB were written since its last wait, and the
transport's drain waits down to its low-water mark (16 KiB): what the server buffers for one
response stays under 128 KiB."""


def open_raw_stream(port: int, path: str, token: str) -> tuple[socket.socket, bytes]:
    """Send the stream's request on a socket with a small receive buffer; read its start up to
    the ``gameFull`` line, then leave the socket unread."""
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.settimeout(15)
    raw.connect(("127.0.0.1", port))
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n"
    raw.sendall(request.encode())
    start = b""
    while b'"gameFull"' not in start or not start.endswith(b"\n"):
        chunk = raw.recv(65536)
        assert chunk, f"the stream closed at once: {start!r}"
        start += chunk
    return raw, start


def drain(raw: socket.socket) -> tuple[int, bytes]:
    """Read what is left, to the connection's end: (bytes, the last ones)."""
    received, tail = 0, b""
    raw.settimeout(15)
    try:
        while chunk := raw.recv(1 << 20):
            received += len(chunk)
            tail = (tail + chunk)[-64:]
    except ConnectionResetError:
        pass
    finally:
        raw.close()
    return received, tail


async def test_a_bot_that_stops_reading_is_cut_off_and_the_others_are_served(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(**FAST)
    bot = await make_bot(app, open_client, "robo")
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    await human.ok(
        "match", {"to": "robo", "variant": "minishogi", "tc": FISCHER, "colour": "first"}
    )
    challenge = await events.next("challenge")
    await call(bot.client.bots.accept_challenge, challenge["challenge"]["id"])
    game_id = (await events.next("gameStart"))["game"]["gameId"]
    sentinel = await bot.game(game_id)
    await sentinel.next("gameFull")
    # Both players move first: a game without its first moves is aborted after a while.
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a1b2"})
    await call(bot.client.bots.make_move, game_id, "a5a2")
    await sentinel.next(lambda e: e["type"] == "gameState" and e["moves"] == "a1b2 a5a2")
    links = app.api.context.links
    [link] = [link for link in links.online() if link.name == "robo"]
    assert isinstance(link, BotLink)
    before = set(link.game_streams)  # the sentinel's
    path = f"/api/bot/game/stream/{game_id}"
    raw, start = await asyncio.to_thread(open_raw_stream, app.port, path, bot.token)
    assert b" 200 " in start.split(b"\r\n", 1)[0] and b"application/x-ndjson" in start
    [slow] = link.game_streams - before
    server_connections = app.api._runner.server.connections  # type: ignore[union-attr]

    sent = peak_queue = peak_buffer = 0
    while slow in link.game_streams:
        assert sent < MAX_LINES, f"{sent} lines sent and the stream that is not read is still up"
        for number in range(sent, sent + BATCH):
            await human.send("chat", {"game": game_id, "text": f"{number} {TEXT}"}, ack=number)
        answer = await human.next(lambda m, last=sent + BATCH - 1: m.get("a") == last)
        assert answer["t"] == "ack", answer
        assert not [m for m in human.backlog if m["t"] == "error"], human.backlog[:3]
        human.drop_backlog()
        sent += BATCH
        # The sentinel has every line of the batch, in order, while the other stream is stuck.
        last = await sentinel.next(
            lambda e, n=sent - 1: e["type"] == "chatLine" and e["text"].startswith(f"{n} ")
        )
        assert last["username"] == "alice"
        peak_queue = max(peak_queue, slow._queue.qsize())
        peak_buffer = max(
            peak_buffer,
            *(c.transport.get_write_buffer_size() for c in server_connections if c.transport),
        )
    # Cut off: what the server held for it stayed bounded (the queue, aiohttp's buffer).
    assert slow.dropped and peak_queue <= MAX_QUEUED
    assert peak_buffer <= WRITE_BOUND, peak_buffer
    received, tail = await asyncio.to_thread(drain, raw)
    line = len(f'{{"type":"chatLine","room":"player","username":"alice","text":"0 {TEXT}"}}\n')
    assert not tail.endswith(b"0\r\n\r\n"), tail  # cut off, not a chunked body's end
    assert received < sent * line  # lines were never sent to it: nothing kept for it
    print(
        f"cut off after {sent} chat lines ({sent * line // 1024} KiB); it received "
        f"{received // 1024} KiB; peak queue {peak_queue} lines, peak buffer {peak_buffer} bytes"
    )

    # The server goes on serving: the sentinel, the event stream, the game.
    await human.ok("chat", {"game": game_id, "text": "after"})
    await sentinel.next(lambda e: e["type"] == "chatLine" and e["text"] == "after")
    chats = [e["text"].split(" ", 1)[0] for e in sentinel.seen if e["type"] == "chatLine"]
    assert chats == [str(n) for n in range(sent)] + ["after"]  # none lost, none doubled
    await human.ok("move", {"game": game_id, "ply": 3, "move": "b2c3"})
    await call(bot.client.bots.make_move, game_id, "d5c4")  # mate
    final = await sentinel.next(lambda e: e["type"] == "gameState" and e["status"] != "started")
    assert final["moves"] == "a1b2 a5a2 b2c3 d5c4" and final["status"] == "mate"
    assert (await events.next("gameFinish"))["game"]["gameId"] == game_id

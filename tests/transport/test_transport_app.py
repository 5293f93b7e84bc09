"""The composition root: restart recovery, database outages, the review API through the
server, and ``python -m server`` as a process (defaults, health, graceful shutdown)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import urllib.request
from pathlib import Path

import pytest
from support import poll, wait_until
from ws_support import Client, OpenClient, StartApp, pg_behind_proxy, start_game

from server.app import App
from server.app.adapters import StoreRecorder
from server.hub.effects import GameFinished
from server.rules.time_control import Fischer
from server.store import EndJournal, MoveWriter, Store
from server.store.migrate import upgrade_to_head
from server.transport.driver_ports import PersistError

MATE_IN_4 = ["a1b2", "a5a2", "b2c3", "d5c4"]
ROOT = Path(__file__).resolve().parents[2]


async def test_a_restarted_server_resumes_unfinished_games(
    tmp_path: Path, start_app: StartApp, open_client: OpenClient
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'restart.sqlite3'}"
    app = await start_app(database_url=url)
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("Alice")
    await bob.register("Bob")
    game = await start_game(alice, bob, rated=True)
    for uci in MATE_IN_4[:3]:
        await game.play(uci)
    tokens = {"first": game.first.token, "second": game.second.token}
    await app.stop()

    again = await start_app(database_url=url)
    room = again.hub.room(game.id)
    assert room is not None and len(room.records) == 3 and room.started
    clients: dict[str, Client] = {}
    for side, token in tokens.items():
        client = await open_client(again, side)
        assert token is not None
        await client.resume(token)
        assert client.hello is not None and client.hello["d"]["game"] == game.id
        clients[side] = client
        await client.ok("join", {"game": game.id})
        snapshot = await client.next("game")
        assert snapshot["d"]["moves"] == MATE_IN_4[:3] and snapshot["d"]["role"] == side
    game.first, game.second = clients["first"], clients["second"]
    game.turn, game.ply = "second", 3
    await game.play(MATE_IN_4[3])
    end = await game.end()
    assert end["d"]["termination"] == "checkmate"
    stored = await poll(
        lambda: again.store.get_game(game.id),
        lambda stored: stored is not None and stored.status == "finished",
    )
    assert stored is not None
    assert [m.uci for m in stored.moves] == MATE_IN_4
    assert stored.second_rating_after is not None and stored.second_rating_after > 1500


async def test_a_database_outage_refuses_moves_clearly_and_play_resumes_after(
    start_app: StartApp, open_client: OpenClient
) -> None:
    async with pg_behind_proxy() as (via_proxy, _, proxy):
        app = await start_app(database_url=via_proxy)
        a, b = await open_client(app, "a"), await open_client(app, "b")
        await a.guest()
        await b.guest()
        game = await start_game(a, b)
        await game.play("a1b2")
        await proxy.cut()
        refused = await game.second.request("move", {"game": game.id, "ply": 2, "move": "a5a2"})
        assert refused["t"] == "error" and refused["d"]["code"] == "move_not_saved"
        assert "database is unavailable" in refused["d"]["message"]
        assert refused["d"]["state"]["ply"] == 1
        assert await http_status(app, "/healthz") == 503
        await proxy.restore()
        await game.play("a5a2")  # the same move, accepted now
        assert await http_status(app, "/healthz") == 200
        stored = await app.store.get_game(game.id)
        assert stored is not None and [m.uci for m in stored.moves] == ["a1b2", "a5a2"]
        # A resignation during an outage is refused like a move, and nothing changes.
        await proxy.cut()
        refused = await game.first.request("resign", {"game": game.id})
        assert refused["t"] == "error" and refused["d"]["code"] == "resign_not_saved"
        assert refused["d"]["state"]["status"] == "started"
        await proxy.restore()
        await game.first.ok("resign", {"game": game.id})  # acknowledged only once stored
        stored = await app.store.get_game(game.id)
        assert stored is not None and stored.status == "finished"
        assert (stored.result, stored.termination) == ("0-1", "resignation")
        assert (await game.end())["d"]["termination"] == "resignation"


async def test_a_flag_fall_during_an_outage_is_announced_only_once_stored(
    start_app: StartApp, open_client: OpenClient, tmp_path: Path
) -> None:
    async with pg_behind_proxy() as (via_proxy, _, proxy):
        app = await start_app(database_url=via_proxy, journal_dir=str(tmp_path / "journal"))
        a, b = await open_client(app, "a"), await open_client(app, "b")
        await a.guest()
        await b.guest()
        byoyomi = {"kind": "byoyomi", "main_s": 0, "period_s": 1, "periods": 1}
        game = await start_game(a, b, tc=byoyomi)
        await game.play("a1b2")
        await game.play("a5a2")  # the first player has 1 s
        await proxy.cut()
        journal = tmp_path / "journal" / f"{game.id}.json"
        await wait_until(journal.exists)  # the flag fell: decided, kept, told nobody
        assert "end" not in [m["t"] for m in await game.first.settled()]
        refused = await game.first.request("move", {"game": game.id, "ply": 3, "move": "b2c3"})
        assert refused["t"] == "error" and refused["d"]["code"] == "game_over"
        await proxy.restore()
        end = await game.end()  # announced once stored
        assert (end["d"]["result"], end["d"]["termination"]) == ("0-1", "time")
        stored = await app.store.get_game(game.id)
        assert stored is not None and (stored.status, stored.termination) == ("finished", "time")
        await wait_until(lambda: not journal.exists())


async def http_status(app: App, path: str) -> int:
    def fetch() -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{app.port}{path}", timeout=10) as r:
                return int(r.status)
        except urllib.error.HTTPError as error:
            return error.code

    return await asyncio.to_thread(fetch)


async def test_the_health_check_answers_while_every_pooled_connection_is_busy(
    start_app: StartApp,
) -> None:
    """A reconnect storm's logins can hold every pooled connection for seconds: the health
    check pings on a connection of its own, so HAProxy does not take a serving hub for down."""
    app = await start_app("postgresql")
    pool = app.store.engine.sync_engine.pool
    held = []
    try:
        for _ in range(pool.size() + pool._max_overflow):  # type: ignore[attr-defined]
            held.append(await app.store.engine.connect())
        assert pool.checkedout() == len(held) >= 10
        assert await http_status(app, "/healthz") == 200
    finally:
        for connection in held:
            await connection.close()


async def test_finished_games_can_be_reviewed_over_http_and_the_websocket(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    a, b = await open_client(app), await open_client(app)
    await a.guest()
    await b.guest()
    game = await start_game(a, b)
    for uci in MATE_IN_4:
        await game.play(uci)
    await game.end()

    def fetch(path: str) -> tuple[int, bytes]:
        with urllib.request.urlopen(f"http://127.0.0.1:{app.port}{path}", timeout=10) as r:
            return int(r.status), r.read()

    status, body = await poll(
        lambda: asyncio.to_thread(fetch, f"/api/games/{game.id}"),
        lambda answer: json.loads(answer[1])["status"] == "finished",
    )
    shown = json.loads(body)
    assert status == 200 and [m["uci"] for m in shown["moves"]] == MATE_IN_4
    status, usi = await asyncio.to_thread(fetch, f"/api/games/{game.id}.usi")
    assert status == 200 and usi.startswith(b"position sfen")
    # Over the websocket, without logging in.
    viewer = await open_client(app)
    review = await viewer.request("review", {"game": game.id, "ply": 4})
    assert review["t"] == "review" and review["d"]["position"]["ply"] == 4
    listing = await viewer.request("games", {"limit": 5})
    assert [g["id"] for g in listing["d"]["games"]] == [game.id]


async def test_python_dash_m_server_runs_with_defaults_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    """No configuration but a free port: embedded SQLite in ./data, migrated at start; the
    start-up work is done before the hub says it listens."""
    env = {
        **os.environ,
        "HUB_PORT": "0",
        "HUB_ICS_PORT": "0",
        "HUB_NODE_ID": "proc-node",
        "HUB_ARGON2_TIME_COST": "1",
        "HUB_ARGON2_MEMORY_KIB": "8",
        "HUB_ARGON2_PARALLELISM": "1",
        "HUB_REGISTRATIONS_PER_ADDRESS_PER_HOUR": "100000",
        "PYTHONPATH": str(ROOT),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        cwd=tmp_path,
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    try:
        port = None
        lines: list[str] = []
        while port is None:
            line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
            assert line, "".join(lines)
            lines.append(line)
            found = re.search(r"listening on ws://127\.0\.0\.1:(\d+)/ws", line)
            if found:
                port = int(found.group(1))
        # Ready means ready: the heavy start-up work (every variant's step tables, the frozen
        # heap) is done before the hub listens, so the first handshakes are served at once.
        assert any("start-up work done" in line for line in lines[:-1]), "".join(lines)
        assert (tmp_path / "data" / "hub.sqlite3").exists()
        client = await Client.open(f"ws://127.0.0.1:{port}/ws")
        await client.register("Process")
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(client.ws.wait_closed(), 10)
        assert client.ws.close_code == 1001  # going away
        assert await asyncio.wait_for(process.wait(), 30) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_settings_reach_the_websocket_server(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(ws_path="/hub", send_queue_limit=5)
    assert app.url.endswith("/hub")
    client = await open_client(app)
    assert (await client.guest())["t"] == "welcome"
    await wait_until(lambda: app.driver.connections == 1)


async def test_only_ends_that_cannot_be_decided_again_are_kept_in_the_journal(
    tmp_path: Path,
) -> None:
    """An end the rules engine decides from the stored moves (checkmate, repetition …) is
    decided again when a crashed server resumes the game (tests/hub/test_hub_restore.py), so
    it is written without a journal entry; an end that depends on when the server decided it
    (time, abandonment, a first-move abort) stays in the journal until it is stored."""
    start = "rbsgk/4p/5/P4/KGSBR[-] w 0 1"
    async with pg_behind_proxy() as (via_proxy, direct, proxy):
        await upgrade_to_head(direct)
        async with Store.from_url(via_proxy, pool_size=1) as store:
            game_id = await store.create_game(
                variant="minishogi",
                start_fen=start,
                time_control=Fischer(60_000),
                first_name="a",
                second_name="b",
                started=True,
            )
            journal = EndJournal(tmp_path / "journal")

            def end(termination: str, result: str | None = "0-1") -> GameFinished:
                return GameFinished(
                    game_id=game_id,
                    variant="minishogi",
                    rated=False,
                    first_id="a",
                    second_id="b",
                    result=result,
                    termination=termination,
                    plies=0,
                    final_fen=start,
                    ended_ms=0,
                    server_decided=True,
                )

            async with MoveWriter(store) as writer:
                recorder = StoreRecorder(store, writer, journal)
                await proxy.cut()
                for record, kept in (
                    (end("checkmate"), False),
                    (end("repetition", "1/2-1/2"), False),
                    (end("time"), True),
                    (end("abandonment"), True),
                    (end("abort", None), True),
                ):
                    with pytest.raises(PersistError, match="unavailable"):
                        await recorder.write(record)
                    assert (game_id in journal.entries()) is kept, record.termination
                    journal.forget(game_id)
                await proxy.restore()
                assert await recorder.write(end("checkmate")) == []
                assert journal.entries() == {}
            stored = await store.get_game(game_id)
            assert stored is not None
            assert (stored.status, stored.termination) == ("finished", "checkmate")

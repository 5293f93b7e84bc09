"""The tournament director under an arena of N players whose games end together: the wave's
time, the event loop's longest stall meanwhile, the standings push's size, and the
``tournament`` view's answer (size, build and encoding time) after waves 1, 5 and 15.

In-process, on a real store (SQLite in a temporary directory, or ``--database URL``): the
director's runner (``server.app.tournament_live``) with a seat that records the games instead
of creating them in a hub (the hub's game creation is measured by ``bench_load.py``). Phases:
the start (N players waiting: one wave, in the process pool above ``--inline``), then
``--waves`` times every game ends at the same moment (the results reported as the recorder
would, each one stored) and the next wave is paired. A probe task wakes every millisecond and
records the longest gap between its wake-ups (the loop's stall).

Usage: ``python bench/bench_tournament_director.py [--players 1000] [--waves 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

import checkout  # noqa: F401  (this checkout's server first on sys.path)

from server.app.tournament_live import TournamentRunner
from server.hub.messages import Message, MessageKind
from server.hub.tournament.pages import page_count
from server.hub.tournament.values import Joined, TournamentGame, TournamentSettings
from server.hub.tournament.views import standings_payload
from server.rules.time_control import Fischer
from server.store import Store
from server.store.migrate import upgrade_to_head
from server.transport.codec import encode_message


class RecordingSeat:
    """Records the games the runner asks for."""

    def __init__(self) -> None:
        self.games: list[tuple[str, str, str]] = []

    def start_game(self, game_id, white, black, names, settings, tournament) -> None:  # type: ignore[no-untyped-def]
        self.games.append((game_id, white, black))

    def busy(self, player: str) -> bool:
        return False


class StallProbe:
    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.longest = 0.0
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            await asyncio.sleep(0.001)
            now = loop.time()
            self.longest = max(self.longest, now - last - 0.001)
            last = now

    async def stop(self) -> float:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        return self.longest


async def run(players: int, waves: int, inline: int, database: str | None) -> None:
    folder = tempfile.mkdtemp(prefix="bench-tournament-")
    url = database or f"sqlite+aiosqlite:///{Path(folder) / 'bench.sqlite3'}"
    await upgrade_to_head(url)
    store = Store.from_url(url, pool_size=1 if url.startswith("sqlite") else 10)
    now = [1_800_000_000_000]
    seat = RecordingSeat()
    runner = TournamentRunner(
        store, seat, clock_ms=lambda: now[0], node="bench", inline_wave=inline
    )
    rng = random.Random(1)
    settings = TournamentSettings(
        "Bench arena", "arena", "wildcastle", Fischer(180_000, 0), rated=False,
        start_at_ms=now[0] + 60_000, duration_ms=3_600_000, max_players=players,
    )
    from server.store.tournaments import ms_datetime

    tid = await store.create_tournament(settings, created_by=None, now=ms_datetime(now[0]))
    live = await runner.live(tid)
    joins = [
        Joined(f"u{i}", f"player{i}", 1500 + rng.randint(-400, 400), now[0]) for i in range(players)
    ]
    live.seq = await store.append_tournament_events(tid, 0, joins)
    for event in joins:
        live.apply(event)
    probe = StallProbe()
    now[0] = settings.start_at_ms or now[0]
    probe.start()
    started = time.perf_counter()
    await runner.tick(tid)
    first = time.perf_counter() - started
    stall = await probe.stop()
    print(f"start: {len(seat.games)} games paired in {first * 1000:.0f} ms, longest stall {stall * 1000:.1f} ms")
    await settle(runner)
    print(view_cost(live, tid, 1))
    for wave in range(waves):
        playing = list(live.state.playing.items())
        games = {gid for _, gid in playing}
        done = len(seat.games)
        probe.start()
        started = time.perf_counter()
        for game_id in games:
            paired = live.state.games[game_id]
            result = rng.choice(["1-0", "0-1", "1/2-1/2"])
            runner.spawn(
                runner.game_finished(
                    tid, game_id, TournamentGame(paired.white, paired.black, result, 40), now[0]
                )
            )
        while len(seat.games) - done < len(games) * 0.9:
            await asyncio.sleep(0.01)
        elapsed = time.perf_counter() - started
        stall = await probe.stop()
        print(
            f"wave {wave + 2}: {len(games)} games ended together, {len(seat.games) - done} "
            f"paired after {elapsed * 1000:.0f} ms (results stored one by one), longest stall "
            f"{stall * 1000:.1f} ms"
        )
        if wave + 2 in VIEW_WAVES:
            await settle(runner)
            print(view_cost(live, tid, wave + 2))
    whole = whole_standings_frame(tid, settings, live.state, live.standings())
    live.board.view(live.state)  # the rows computed (once per event, shared by every page)
    started = time.perf_counter()
    pages = page_frames(live)
    encoded = time.perf_counter() - started
    sizes = sorted(len(frame) for frame in pages)
    print(
        f"standings push: whole standings {len(whole) / 1000:.0f} kB (before paging, to every "
        f"watcher: {5000 * len(whole) / 1e9:.2f} GB for 5,000); by page ({len(pages)} pages "
        f"encoded in {encoded * 1000:.1f} ms, once each): {sizes[0] / 1000:.1f}–"
        f"{sizes[-1] / 1000:.1f} kB a page, page 1 {len(pages[0]) / 1000:.1f} kB: 5,000 watchers "
        f"of page 1 {5000 * len(pages[0]) / 1e6:.1f} MB a push"
    )
    before = pages
    # One more wave's results: how many pages changed (their watchers are told; the others not).
    for game_id in {gid for _, gid in live.state.playing.items()}:
        paired = live.state.games[game_id]
        await runner.game_finished(
            tid, game_id, TournamentGame(paired.white, paired.black, "1-0", 40), now[0]
        )
    after = page_frames(live)
    changed = sum(1 for a, b in zip(before, after, strict=False) if a != b)
    print(f"after a wave's results: {changed} of {len(after)} pages changed")
    await runner.stop()
    await store.close()


VIEW_WAVES = (1, 5, 15)
"""After these waves, the ``tournament`` view's size and cost are printed."""


async def settle(runner: TournamentRunner) -> None:
    """Let the runner's tasks in flight (the last results, the wave's pairing) finish."""
    for _ in range(200):
        await asyncio.sleep(0.01)


def view_cost(live, tid: str, wave: int) -> str:  # type: ignore[no-untyped-def]
    """The ``tournament`` view's answer as the websocket sends it (page 1 and a player's own
    row and games): its size, the board's build and the encoding's time."""
    from server.transport.tournament_ws import view_frame

    state, board = live.state, live.board
    board._cache.clear()  # the view built from the fold, as after an event
    started = time.perf_counter()
    view = board.view(state)
    built = time.perf_counter() - started
    page = board.standings_payload(state, 1)
    player = next(iter(state.entries))
    me = board.row_of(state, player)
    extra = {"mine": board.games_of(state, player)} if hasattr(board, "games_of") else {}
    started = time.perf_counter()
    frame = view_frame(tid, view, page, me, None, **extra)
    encoded = time.perf_counter() - started
    started = time.perf_counter()
    again = view_frame(tid, view, board.standings_payload(state, 2), me, None, **extra)
    spliced = time.perf_counter() - started
    return (
        f"view after wave {wave} ({len(state.games)} games): {len(frame) / 1000:.1f} kB, built "
        f"in {built * 1000:.1f} ms, encoded in {encoded * 1000:.1f} ms (another page "
        f"{spliced * 1000:.2f} ms, {len(again) / 1000:.1f} kB)"
    )


def whole_standings_frame(tid: str, settings: TournamentSettings, state, rows) -> bytes:  # type: ignore[no-untyped-def]
    """The push as it was before the standings were paged: every row."""
    payload = dict(standings_payload(tid, settings, state, rows))
    payload["standings"] = [
        row for page in range(1, page_count(len(rows)) + 1)
        for row in standings_payload(tid, settings, state, rows, page=page)["standings"]
    ]
    return encode_message(Message(MessageKind.TOURNAMENT_STANDINGS, payload))


def page_frames(live) -> list[bytes]:  # type: ignore[no-untyped-def]
    """Every page's ``tournament_standings`` frame now."""
    count = page_count(len(live.standings()))
    return [
        encode_message(
            Message(MessageKind.TOURNAMENT_STANDINGS, live.board.standings_payload(live.state, page))
        )
        for page in range(1, count + 1)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--waves", type=int, default=3)
    parser.add_argument("--inline", type=int, default=50, help="tournament_inline_wave")
    parser.add_argument("--database", help="a database URL (default: SQLite in a temp dir)")
    args = parser.parse_args()
    asyncio.run(run(args.players, args.waves, args.inline, args.database))


if __name__ == "__main__":
    main()

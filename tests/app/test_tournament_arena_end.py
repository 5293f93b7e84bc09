"""An arena's end and the games' ends around it (docs/tournaments.md, "An arena's last
games"): a game that ended before time was up counts, even when its report waits for the
director's lock while the timer ends the arena; one that ends after it does not."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from server.app.tournament_live import TournamentRunner
from server.hub.identity import PlayerId
from server.hub.tournament.values import Joined, TournamentGame, TournamentSettings
from server.rules.time_control import Fischer
from server.store import Store
from server.store.migrate import upgrade_to_head
from server.store.tournament_codec import event_json

T0 = 1_800_000_000_000
MINUTE = 60_000


class Seat:
    """The hub's side: records the games the runner asks for; nobody is busy."""

    def __init__(self) -> None:
        self.games: list[tuple[str, PlayerId, PlayerId]] = []

    def start_game(
        self,
        game_id: str,
        white: PlayerId,
        black: PlayerId,
        names: tuple[str, str],
        settings: TournamentSettings,
        tournament: tuple[str, int],
    ) -> None:
        self.games.append((game_id, white, black))

    def busy(self, player: PlayerId) -> bool:
        return False


async def test_a_game_ended_before_time_is_up_counts_one_ended_after_does_not(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'end.sqlite3'}"
    await upgrade_to_head(url)
    store = Store.from_url(url)
    now = [T0]
    seat = Seat()
    runner = TournamentRunner(store, seat, clock_ms=lambda: now[0], node="n1", coalesce_ms=0)
    try:
        arena = TournamentSettings(
            "Last games", "arena", "wildcastle", Fischer(MINUTE, 0),
            start_when_joined=4, duration_ms=10 * MINUTE,
        )
        tid = await store.create_tournament(arena, created_by=None, now=datetime.fromtimestamp(T0 / 1000, UTC))
        joins = [Joined(p, p, 1500, T0) for p in ("ann", "bob", "cyd", "dov")]
        await store.append_tournament_events(tid, 0, joins)
        await runner.resume(tid)  # starts it and pairs the first wave: two games
        assert len(seat.games) == 2
        (first, fw, fb), (second, sw, sb) = seat.games
        live = await runner.live(tid)

        # Time is up while the first game's end (told at T0 + 10 min - 1 ms) waits for the
        # lock, held by the timer's work: the end folds it in before Ended.
        now[0] = T0 + 10 * MINUTE
        async with live.lock:
            told = asyncio.ensure_future(
                runner.game_finished(tid, first, TournamentGame(fw, fb, "1-0", 30), now[0] - 1)
            )
            await asyncio.sleep(0)  # the report is in live.finishes, waiting for the lock
            assert live.finishes
            await runner.advance(live)
        await told
        # The second game ends after: not counted.
        now[0] += 1
        await runner.game_finished(tid, second, TournamentGame(sw, sb, "1-0", 30), now[0])

        events = [event_json(e) for e in (await store.load_tournament(tid)).events]
        kinds = [e["type"] for e in events]
        assert kinds[-2:] == ["finished", "ended"] and kinds.count("finished") == 1
        assert next(e for e in events if e["type"] == "finished")["game_id"] == first
        scores = {row.player: row.score for row in live.standings()}
        assert scores == {fw: 2, fb: 0, sw: 0, sb: 0}
        assert live.state.playing == {sw: second, sb: second}  # still played, not counted
    finally:
        await runner.stop()
        await store.close()

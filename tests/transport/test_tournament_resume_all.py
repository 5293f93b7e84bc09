"""A hub at start takes up every unfinished tournament of its store, however many: more than
one page of the store's listing (docs/tournaments.md, "The director", At start)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from ws_support import StartApp

import server.app.tournament_live
from server.hub.tournament.values import TournamentSettings
from server.rules.time_control import Fischer

PAGE = 5
"""The ids read at a time at start, made small here: 500 in a hub (``MAX_LIST``)."""
STALE = 2 * PAGE + 2
"""Three pages: the start used to read only the newest page."""


async def test_every_unfinished_tournament_is_taken_up_at_start(
    start_app: StartApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round robins whose start time passed two hours ago with nobody entered (a scheduled
    series left without players while no hub ran), more than two pages of them, are stored; a
    hub started on the database takes up each one, and each is given up (``Ended``, no games:
    "Scheduled tournaments"): none is left unfinished."""
    monkeypatch.setattr(server.app.tournament_live, "MAX_LIST", PAGE)
    url = f"sqlite+aiosqlite:///{tmp_path / 'many.sqlite3'}"
    first = await start_app(database_url=url)  # the schema
    two_hours_ago = int(time.time() * 1000) - 2 * 3_600_000
    stale = TournamentSettings(
        "Stale", "round_robin", "wildcastle", Fischer(60_000, 0), start_at_ms=two_hours_ago
    )
    ids = {
        await first.store.create_tournament(stale, created_by=None, now=datetime.now(UTC))
        for _ in range(STALE)
    }
    assert len(await first.store.unfinished_tournament_ids(limit=PAGE)) == PAGE  # pages to read
    await first.stop()

    second = await start_app(database_url=url, journal_dir=first.settings.journal_dir)
    assert await second.store.unfinished_tournament_ids() == []
    for tournament_id in ids:
        stored = await second.store.load_tournament(tournament_id)
        assert stored.info.status == "finished" and stored.info.next_deadline_at is None
        assert [type(event).__name__ for event in stored.events] == ["Ended"]

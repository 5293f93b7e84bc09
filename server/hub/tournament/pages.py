"""Standings by page: what a tournament's watcher is shown and pushed (lichess-like, a page of
:data:`PAGE_SIZE` rows) instead of every row.

Pages are numbered from 1; page ``n`` holds the rows ``(n - 1) * PAGE_SIZE`` to
``n * PAGE_SIZE - 1`` of the standings (best first). An empty tournament has one page, empty.
A watcher either watches a fixed page, or follows a player (the page holding their row, page 1
when they have none). Pure: the director (``server.app.tournament_watchers``) encodes each
page's frame once per standings version and tells only the watchers whose page changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from server.hub.identity import PlayerId
from server.hub.tournament_payloads import (
    TournamentStandingsPayload,
    TournamentStandingView,
    TournamentStatusName,
)

__all__ = [
    "MAX_STANDINGS_PAGE",
    "PAGE_SIZE",
    "page_count",
    "page_of_index",
    "page_payload",
    "page_rows",
    "watched_page",
]

PAGE_SIZE = 10
"""Standings rows on one page (lichess's tournament page shows 10)."""
MAX_STANDINGS_PAGE = 10_000
"""The largest page number a request may name (100,000 players, the reader's bound on a
tournament's size, make 10,000 pages); a page past a tournament's last one is refused by the
director."""


def page_count(players: int) -> int:
    """The number of pages of ``players`` rows (1 for none: an empty first page)."""
    return max(1, -(-players // PAGE_SIZE))


def page_of_index(index: int) -> int:
    """The page holding the row at ``index`` (0: the leader)."""
    return index // PAGE_SIZE + 1


def page_rows(
    rows: Sequence[TournamentStandingView], page: int
) -> list[TournamentStandingView]:
    """The rows of ``page`` (1-based; a page past the last one is empty)."""
    start = (page - 1) * PAGE_SIZE
    return list(rows[start : start + PAGE_SIZE])


def watched_page(
    page: int | None, player: PlayerId | None, index: Mapping[PlayerId, int], players: int
) -> int:
    """The page a watcher sees: ``page`` (None: the one holding ``player``'s row, else page 1),
    never past the last page. ``index``: each player's row index in the standings."""
    if page is None:
        at = index.get(player) if player is not None else None
        page = 1 if at is None else page_of_index(at)
    return min(page, page_count(players))


def page_payload(
    tournament_id: str,
    status: TournamentStatusName,
    round_: int,
    rows: Sequence[TournamentStandingView],
    page: int,
    playing: Mapping[PlayerId, str],
) -> TournamentStandingsPayload:
    """``tournament_standings`` of ``page``: its rows, the number of players and pages, and the
    games being played by the page's players (``playing``: player → game), so that a change
    elsewhere in the standings leaves the page's frame as it was."""
    shown = page_rows(rows, page)
    return {
        "id": tournament_id,
        "status": status,
        "round": round_,
        "page": page,
        "pages": page_count(len(rows)),
        "players": len(rows),
        "standings": shown,
        "playing": sorted({playing[r["player"]] for r in shown if r["player"] in playing}),
    }

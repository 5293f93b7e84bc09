"""Standings pages (``server.hub.tournament.pages``): every row on exactly one page, a
watcher's page holds its player's row, never past the last page."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from server.hub.tournament.pages import PAGE_SIZE, page_count, page_payload, watched_page


def _rows(count: int) -> list[Any]:
    return [{"player": f"p{i}", "rank": i + 1} for i in range(count)]


@settings(max_examples=50, deadline=None)
@given(players=st.integers(0, 95), page=st.one_of(st.none(), st.integers(1, 12)),
       who=st.integers(0, 100))
def test_pages_split_the_rows_and_follow_the_player(players: int, page: int | None, who: int) -> None:
    rows = _rows(players)
    index = {row["player"]: at for at, row in enumerate(rows)}
    pages = page_count(players)
    shown = [page_payload("t", "started", 1, rows, n, {})["standings"] for n in range(1, pages + 1)]
    assert [row for part in shown for row in part] == rows  # each row once, in order
    assert all(len(part) == PAGE_SIZE for part in shown[:-1])
    seen = watched_page(page, f"p{who}", index, players)
    assert 1 <= seen <= pages
    if page is None and who < players:
        assert {"player": f"p{who}", "rank": who + 1} in shown[seen - 1]
    elif page is None:
        assert seen == 1
    else:
        assert seen == min(page, pages)

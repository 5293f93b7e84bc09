"""ICS ``tstandings <id> [page]``: pages of 100 rows as text (the lines alone, no server)."""

from __future__ import annotations

from typing import Any

from server.transport.ics.tournaments import SHOWN_ROWS, own_page, standings_lines


def test_ics_standings_pages() -> None:
    settings_view = {"name": "Cup", "format": "arena", "variant": "wildcastle", "rounds": None,
                     "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0},
                     "rated": False}
    rows = [{"rank": i + 1, "player": f"p{i}", "name": f"n{i}", "score": 0, "games": 0,
             "tiebreaks": {}, "fire": False, "berserks": 0, "status": "active"}
            for i in range(250)]
    view: Any = {"id": "T1", "status": "finished", "round": 3, "settings": settings_view,
                 "standings": rows, "countdown_ms": None}
    assert own_page(view, "p205") == 3 and own_page(view, "nobody") == 1
    third = standings_lines(view, 3)
    shown = [line for line in third if line.split()[1:2] and line.split()[1].startswith("n")]
    assert len(shown) == 250 - 2 * SHOWN_ROWS and shown[0].split()[1] == "n200"
    assert 'Page 3 of 3 (rows 201-250; "tstandings T1 <page>" for another).' in third
    assert third[-1] == "250 players."

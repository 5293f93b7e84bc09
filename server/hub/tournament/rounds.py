"""The pairings a tournament's view shows, and a round's pairings by page: what keeps the
``tournament`` view's size bounded whatever the number of rounds (an arena's waves) and players
(docs/tournaments.md, "Scale").

The view shows at most :data:`VIEW_PAIRINGS` games: a Swiss's or a round robin's current round
in board order, or an arena's games being played, the best placed players' first (lichess's
"top games": the leader's game first); and the watcher's own games (at most
:data:`MY_PAIRINGS`, the newest). Any round is read on demand (``tournament_round``), by page
of :data:`ROUND_PAGE_SIZE` pairings, numbered from 1 (a round without games has one page,
empty). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from server.hub.identity import PlayerId

__all__ = [
    "MAX_ROUND",
    "MAX_ROUND_PAGE",
    "MY_PAIRINGS",
    "ROUND_PAGE_SIZE",
    "VIEW_PAIRINGS",
    "round_page",
    "round_pages",
    "shown_games",
]

VIEW_PAIRINGS = 30
"""Games the view shows (lichess's arena page shows its top games, a handful)."""
MY_PAIRINGS = 30
"""A watcher's own games the view shows, the newest (an arena's player may play hundreds)."""
ROUND_PAGE_SIZE = 50
"""Pairings in one page of ``tournament_round`` (~10 kB)."""
MAX_ROUND = 1_000_000
"""The largest round a request may name (a week's arena of quick games pairs waves by the
thousand); a round not paired yet is refused by the director."""
MAX_ROUND_PAGE = 1_000
"""The largest page a request may name (100,000 players make 50,000 games a round: 1,000
pages); a page past a round's last one is refused by the director."""

T = TypeVar("T")


def shown_games(
    arena: bool,
    ranked_players: Iterable[PlayerId],
    playing: Mapping[PlayerId, str],
    round_games: Sequence[str],
) -> tuple[list[str], int]:
    """The games the view shows and how many there are in all: an arena's games being played
    (``playing``: player → game), those of the best placed (``ranked_players``: the standings'
    order) first; otherwise the current round's ``round_games`` in board order."""
    if not arena:
        return list(round_games[:VIEW_PAIRINGS]), len(round_games)
    shown: list[str] = []
    seen: set[str] = set()
    for player in ranked_players:
        game = playing.get(player)
        if game is not None and game not in seen:
            seen.add(game)
            shown.append(game)
            if len(shown) == VIEW_PAIRINGS:
                break
    return shown, len(set(playing.values()))


def round_pages(total: int) -> int:
    """The pages of a round of ``total`` games (1 for none)."""
    return max(1, -(-total // ROUND_PAGE_SIZE))


def round_page(items: Sequence[T], page: int) -> list[T]:
    """The items of ``page`` (1-based; past the last page: none)."""
    start = (page - 1) * ROUND_PAGE_SIZE
    return list(items[start : start + ROUND_PAGE_SIZE])

"""The ``who`` listing: the players online on this hub, as JSON (see docs/protocol.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from server.hub.identity import PlayerId, PlayerInfo, RatingKey
from server.hub.payloads import WhoPayload, WhoPlayerView

__all__ = ["who_view"]


def _pool_name(key: RatingKey) -> str:
    # A pool is a variant or (variant, speed); JSON keys must be strings.
    return key if isinstance(key, str) else f"{key[0]}/{key[1]}"


def who_view(players: Iterable[PlayerInfo], playing: Mapping[PlayerId, str]) -> WhoPayload:
    """``{"players": [...]}``, sorted by name: each player's public view, its rated pools
    (``{"minishogi/rapid": {"rating": 1620, "provisional": false}}``, empty for guests) and the
    id of the game it plays (``None`` when idle)."""
    listing: list[WhoPlayerView] = []
    for info in sorted(players, key=lambda p: (p.name.lower(), p.id)):
        entry: WhoPlayerView = {
            **info.view(),
            "ratings": {
                _pool_name(key): {"rating": round(r.rating), "provisional": r.provisional}
                for key, r in info.ratings.items()
            },
            "game": playing.get(info.id),
        }
        listing.append(entry)
    return {"players": listing}

"""The cluster seek registry's entries, and which node a new seek should run on.

A seek lives in exactly one hub; the registry (:class:`server.bus.SeekRegistry`) is the index
every node reads: seek id → a :class:`RegistryEntry`, whose ``view`` is the hub's own view of
the seek (:class:`~server.hub.payloads.SeekView`, what ``sought`` lists).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TypedDict

from server.hub.commands import time_control_from_json
from server.hub.identity import PlayerInfo, Rating
from server.hub.lobby import GameTerms, Seek
from server.hub.payloads import SeekView

__all__ = ["Listed", "RegistryEntry", "listed_from_payload", "registry_payload"]


class RegistryEntry(TypedDict):
    """One seek's entry in the cluster registry (stored as JSON)."""

    node: str
    """The node whose hub holds the seek."""
    posted: int
    """When it was listed: wall-clock ms."""
    rating: float
    """The seeker's exact rating in the seek's pool (the view rounds it)."""
    view: SeekView


def registry_payload(seek: Seek, node_id: str) -> str:
    """The registry entry of a seek of this node's hub."""
    entry: RegistryEntry = {
        "node": node_id,
        "posted": int(time.time() * 1000),
        "rating": seek.rating,
        "view": seek.view(),
    }
    return json.dumps(entry, separators=(",", ":"))


@dataclass(frozen=True)
class Listed:
    """A registry entry, read back: the seek as the hub's pairing rule sees it."""

    node: str
    posted: int
    seek: Seek
    view: SeekView


def listed_from_payload(payload: str) -> Listed:
    """Read one registry entry.

    :raises ValueError: a malformed entry.
    """
    try:
        entry: RegistryEntry = json.loads(payload)  # each field is checked as it is read
        view = entry["view"]
        player_view = view["player"]
        terms = GameTerms(view["variant"], time_control_from_json(view["tc"]), bool(view["rated"]))
        rating = Rating(float(entry["rating"]))
        player = PlayerInfo(
            str(player_view["id"]),
            str(player_view["name"]),
            bool(player_view["guest"]),
            {(terms.variant, terms.speed): rating},
        )
        rating_range = view["range"]
        seek = Seek(
            id=int(view["id"]),
            player=player,
            terms=terms,
            colour=view["colour"],
            rating_range=None if rating_range is None else (rating_range[0], rating_range[1]),
            manual=bool(view["manual"]),
            created_ms=int(entry["posted"]),
        )
        return Listed(str(entry["node"]), int(entry["posted"]), seek, view)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise ValueError(f"malformed seek registry entry: {error}") from None

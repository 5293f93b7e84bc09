"""Who a connection belongs to, as told to the hub by the adapter (the hub never authenticates)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from server.hub.glicko2 import Rating
from server.hub.payloads import PlayerView

__all__ = ["COMPUTER", "PlayerId", "PlayerInfo", "Rating", "RatingKey"]

PlayerId = str
"""Stable player id chosen by the adapter (registered users and guests alike; must be unique)."""

RatingKey = str | tuple[str, str]
"""A rating pool: ``variant`` or ``(variant, speed)``."""


@dataclass(frozen=True)
class PlayerInfo:
    """A player's identity: id, display name, guest flag, ratings and the bot flag.

    ``ratings`` maps a rating pool to a rating. A pool is ``(variant, speed)`` (the store's pools,
    speed from :func:`server.hub.glicko2.speed_class`) or just ``variant``; a lookup prefers the
    ``(variant, speed)`` entry, then the ``variant`` entry, then the default rating (1500,
    provisional). Guests play casual games only. ``computer`` marks the computer player (engine
    workers play for it, docs/engines.md): it may play any number of games at once, all casual.
    """

    id: PlayerId
    name: str
    guest: bool = False
    ratings: Mapping[RatingKey, Rating] = field(default_factory=dict)
    bot: bool = False
    """A bot account (the Bot API, docs/bots.md): shown as ``"bot": true`` in the views."""
    computer: bool = False
    """The computer player (engine workers play its moves): ``"computer": true`` in the views."""

    def __post_init__(self) -> None:
        # Freeze the mapping so a PlayerInfo held by a seek or room cannot change under it.
        object.__setattr__(self, "ratings", MappingProxyType(dict(self.ratings)))

    def rating(self, variant: str, speed: str | None = None) -> Rating:
        """The rating in the pool ``(variant, speed)`` (see the class docstring)."""
        if speed is not None:
            pooled = self.ratings.get((variant, speed))
            if pooled is not None:
                return pooled
        return self.ratings.get(variant, Rating())

    def with_rating(self, key: RatingKey, rating: Rating) -> PlayerInfo:
        """A copy whose rating in pool ``key`` is ``rating``."""
        ratings = dict(self.ratings)
        ratings[key] = rating
        return replace(self, ratings=ratings)

    def view(self, variant: str | None = None, speed: str | None = None) -> PlayerView:
        """The public JSON view; with a variant, includes that rating (``None`` for guests)."""
        obj: PlayerView = {"id": self.id, "name": self.name, "guest": self.guest}
        if self.computer:
            obj["computer"] = True
        if self.bot:
            obj["bot"] = True
        if variant is not None:
            if self.guest:
                obj["rating"] = None
                obj["provisional"] = True
            else:
                rating = self.rating(variant, speed)
                obj["rating"] = round(rating.rating)
                obj["provisional"] = rating.provisional
        return obj


COMPUTER = PlayerInfo("computer", "Computer", guest=False, computer=True)
"""The computer player (engine workers play for it: server/app/computer.py). Its name is
reserved (no account or guest can take it), so a stored game's player named "Computer" without
a player id is the computer (:mod:`server.cluster.restore`)."""

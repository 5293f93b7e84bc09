"""Seeks and direct challenges (ICS vocabulary): records, pairing rules and the two books.

Pairing rule (:func:`seeks_fit`): two seeks fit when they come from different players, propose the
same variant, time control and rated-ness, have compatible colours (not both ``first``, not both
``second``), each player's rating lies inside the other's rating range (a missing range accepts
everyone), and neither is manual. A manual seek is never paired automatically: someone must
``play`` it, which sends its owner a challenge to accept or decline.

Ids: each book numbers its seeks (challenges) ``id_base + 1``, ``id_base + 2`` … with an
:class:`IdCounter`. The base is 0 unless the driver sets another before the first id (see
:meth:`server.hub.hub.Hub.set_id_base`): hubs that share one lobby, the nodes of a cluster, take
distinct bases so that their ids never collide.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from server.hub.clock import time_control_view
from server.hub.commands import ColourChoice
from server.hub.errors import CommandError, ErrorCode
from server.hub.glicko2 import speed_of
from server.hub.identity import PlayerId, PlayerInfo, Rating
from server.hub.payloads import ChallengeView, PlayerView, SeekView, TermsView
from server.rules.time_control import TimeControl

MAX_SEEKS_PER_PLAYER = 3
"""Open seeks a player may have at once (the default of :class:`SeekBook`)."""
MAX_CHALLENGES_PER_SENDER = 3
"""Open challenges a player may have sent at once (the default of :class:`ChallengeBook`)."""
MAX_STORED_SEEKS = 10
"""Stored correspondence seeks a registered player may have at once (beside the others)."""
MAX_STORED_CHALLENGES = 10
"""Stored correspondence challenges a registered player may have sent at once."""


def new_offer_key(rng: random.Random) -> str:
    """The key of a stored seek or challenge (its row in the store): 16 hex digits. Ids are a
    hub's own numbers, given again after a restart; the key stays."""
    return f"{rng.getrandbits(64):016x}"


@dataclass(frozen=True)
class TournamentTag:
    """The tournament a game belongs to (its id), the round (an arena's wave) and whether its
    players may berserk (an arena that allows it)."""

    id: str
    round: int
    berserk: bool = False


@dataclass(frozen=True)
class GameTerms:
    """What a game will be: variant, time control, rated or casual, and the tournament it is
    a game of (None: none)."""

    variant: str
    control: TimeControl
    rated: bool
    tournament: TournamentTag | None = None

    @property
    def speed(self) -> str:
        """The speed class of the time control: with the variant, the rating pool."""
        return speed_of(self.control)

    def rating_of(self, player: PlayerInfo) -> Rating:
        """``player``'s rating in this game's pool (guests: the default rating)."""
        return player.rating(self.variant, self.speed)

    def player_view(self, player: PlayerInfo) -> PlayerView:
        return player.view(self.variant, self.speed)

    def view(self) -> TermsView:
        view: TermsView = {
            "variant": self.variant,
            "tc": time_control_view(self.control),
            "speed": self.speed,
            "rated": self.rated,
        }
        tag = self.tournament
        if tag is not None:
            view["tournament"] = {"id": tag.id, "round": tag.round, "berserk": tag.berserk}
        return view


def range_accepts(rating_range: tuple[int, int] | None, rating: float) -> bool:
    """Whether ``rating`` lies inside the inclusive range (``None`` accepts every rating)."""
    return rating_range is None or rating_range[0] <= rating <= rating_range[1]


def colours_compatible(a: ColourChoice, b: ColourChoice) -> bool:
    """Two colour wishes fit unless both want the same side."""
    return a == "random" or b == "random" or a != b


def first_mover(a: ColourChoice, b: ColourChoice, rng: random.Random) -> int:
    """Which of two compatible wishes (0 = ``a``, 1 = ``b``) gets the first player's side."""
    if a == "first" or b == "second":
        return 0
    if b == "first" or a == "second":
        return 1
    return rng.randrange(2)


def opposite(colour: ColourChoice) -> ColourChoice:
    return {"first": "second", "second": "first", "random": "random"}[colour]  # type: ignore[return-value]


@dataclass(frozen=True)
class Seek:
    """An open seek. ``player`` is the seeker as known when the seek was made."""

    id: int
    player: PlayerInfo
    terms: GameTerms
    colour: ColourChoice
    rating_range: tuple[int, int] | None
    manual: bool
    created_ms: int
    key: str | None = None
    """Set for a stored seek (a registered player's correspondence seek): its store key. A
    stored seek stays open while its player is offline, and across restarts."""

    @property
    def stored(self) -> bool:
        return self.key is not None

    @property
    def rating(self) -> float:
        """The seeker's rating in the seek's pool (guests: the default rating)."""
        return self.terms.rating_of(self.player).rating

    def accepts(self, player: PlayerInfo) -> bool:
        """Whether ``player``'s rating lies inside this seek's range."""
        return range_accepts(self.rating_range, self.terms.rating_of(player).rating)

    def view(self) -> SeekView:
        return {
            "id": self.id,
            "player": self.terms.player_view(self.player),
            **self.terms.view(),
            "colour": self.colour,
            "range": None if self.rating_range is None else list(self.rating_range),
            "manual": self.manual,
        }


def seeks_fit(a: Seek, b: Seek) -> bool:
    """The pairing rule of the module docstring."""
    return (
        a.player.id != b.player.id
        and not a.manual
        and not b.manual
        and a.terms == b.terms
        and colours_compatible(a.colour, b.colour)
        and a.accepts(b.player)
        and b.accepts(a.player)
    )


class IdCounter:
    """Ids ``base + 1``, ``base + 2`` … (``base`` is 0 unless :meth:`set_base` changes it)."""

    def __init__(self, base: int = 0) -> None:
        self._base = 0
        self._last = 0
        self.set_base(base)

    @property
    def base(self) -> int:
        return self._base

    @property
    def issued(self) -> bool:
        """Whether an id was issued already."""
        return self._last != self._base

    def set_base(self, base: int) -> None:
        """Number the next ids from ``base + 1`` on.

        :raises ValueError: ``base`` is negative, or an id was issued already (a new base
            could repeat it).
        """
        if base < 0:
            raise ValueError(f"id base must not be negative, got {base}")
        if self.issued:
            raise ValueError("the id base cannot change once ids were issued")
        self._base = self._last = base

    def next(self) -> int:
        self._last += 1
        return self._last


class SeekBook:
    """Open seeks in posting order, at most ``limit_per_player`` per player, and beside them at
    most ``stored_limit`` stored ones."""

    def __init__(
        self, limit_per_player: int = MAX_SEEKS_PER_PLAYER, stored_limit: int = MAX_STORED_SEEKS
    ) -> None:
        self.limit_per_player = limit_per_player
        self.stored_limit = stored_limit
        self.ids = IdCounter()
        """Numbers new ids (see the module docstring)."""
        self._seeks: dict[int, Seek] = {}

    def new_id(self) -> int:
        return self.ids.next()

    def __len__(self) -> int:
        return len(self._seeks)

    def all(self) -> list[Seek]:
        return list(self._seeks.values())

    def get(self, seek_id: int) -> Seek | None:
        return self._seeks.get(seek_id)

    def of_player(self, player_id: PlayerId) -> list[Seek]:
        return [s for s in self._seeks.values() if s.player.id == player_id]

    def check_room(self, player_id: PlayerId, stored: bool = False) -> None:
        """:raises CommandError: ``seek_limit`` if the player may not post another seek (a
        stored one when ``stored``)."""
        mine = [s for s in self.of_player(player_id) if s.stored == stored]
        if stored and len(mine) >= self.stored_limit:
            raise CommandError(
                ErrorCode.SEEK_LIMIT,
                f"You already have {self.stored_limit} open correspondence seeks; "
                "cancel one first.",
            )
        if not stored and len(mine) >= self.limit_per_player:
            raise CommandError(
                ErrorCode.SEEK_LIMIT,
                f"You already have {self.limit_per_player} open seeks; withdraw one first.",
            )

    def add(self, seek: Seek, *, check: bool = True) -> None:
        """Open ``seek`` (``check``: within the limits; a restored seek is not checked)."""
        if check:
            self.check_room(seek.player.id, seek.stored)
        self._seeks[seek.id] = seek

    def remove(self, seek_id: int) -> Seek | None:
        return self._seeks.pop(seek_id, None)

    def remove_player(self, player_id: PlayerId, *, stored: bool = True) -> list[Seek]:
        """Remove the player's seeks (the stored ones too unless ``stored`` is False)."""
        gone = [s for s in self.of_player(player_id) if stored or not s.stored]
        for seek in gone:
            del self._seeks[seek.id]
        return gone

    def find_partner(self, seek: Seek) -> Seek | None:
        """The oldest open seek that fits ``seek`` (which need not be in the book)."""
        for waiting in self._seeks.values():
            if waiting.id != seek.id and seeks_fit(waiting, seek):
                return waiting
        return None


@dataclass(frozen=True)
class Challenge:
    """A direct challenge (``match``) from ``sender`` to ``target``; ``colour`` is the sender's wish.

    ``seek_id`` is set when the challenge answers a manual seek (``play`` on it).
    """

    id: int
    sender: PlayerInfo
    target: PlayerInfo
    terms: GameTerms
    colour: ColourChoice
    created_ms: int
    seek_id: int | None = None
    key: str | None = None
    """Set for a stored challenge (a correspondence challenge between registered players):
    its store key. It stays open while either player is offline, and across restarts."""

    @property
    def stored(self) -> bool:
        return self.key is not None

    def view(self) -> ChallengeView:
        return {
            "id": self.id,
            "from": self.terms.player_view(self.sender),
            "to": self.terms.player_view(self.target),
            **self.terms.view(),
            "colour": self.colour,
            "seek": self.seek_id,
        }


class ChallengeBook:
    """Open challenges; a sender has at most ``limit_per_sender``, and beside them at most
    ``stored_limit`` stored ones, and one per target."""

    def __init__(
        self,
        limit_per_sender: int = MAX_CHALLENGES_PER_SENDER,
        stored_limit: int = MAX_STORED_CHALLENGES,
    ) -> None:
        self.limit_per_sender = limit_per_sender
        self.stored_limit = stored_limit
        self.ids = IdCounter()
        """Numbers new ids (see the module docstring)."""
        self._challenges: dict[int, Challenge] = {}

    def new_id(self) -> int:
        return self.ids.next()

    def __len__(self) -> int:
        return len(self._challenges)

    def get(self, challenge_id: int) -> Challenge | None:
        return self._challenges.get(challenge_id)

    def all(self) -> list[Challenge]:
        """Every open challenge, in the order they were made."""
        return list(self._challenges.values())

    def check_room(self, sender: PlayerId, target: PlayerId, stored: bool = False) -> None:
        """:raises CommandError: ``challenge_exists`` / ``challenge_limit`` (counting the
        stored challenges when ``stored``, the others otherwise)."""
        outgoing = [c for c in self._challenges.values() if c.sender.id == sender]
        if any(c.target.id == target for c in outgoing):
            raise CommandError(ErrorCode.CHALLENGE_EXISTS)
        counted = sum(1 for c in outgoing if c.stored == stored)
        if stored and counted >= self.stored_limit:
            raise CommandError(
                ErrorCode.CHALLENGE_LIMIT,
                f"You already have {self.stored_limit} open correspondence challenges; "
                "withdraw one first.",
            )
        if not stored and counted >= self.limit_per_sender:
            raise CommandError(
                ErrorCode.CHALLENGE_LIMIT,
                f"You already have {self.limit_per_sender} open challenges; withdraw one first.",
            )

    def add(self, challenge: Challenge, *, check: bool = True) -> None:
        """Open ``challenge`` (``check``: within the limits; a restored one is not checked)."""
        if check:
            self.check_room(challenge.sender.id, challenge.target.id, challenge.stored)
        self._challenges[challenge.id] = challenge

    def remove(self, challenge_id: int) -> Challenge | None:
        return self._challenges.pop(challenge_id, None)

    def involving(self, player_id: PlayerId) -> list[Challenge]:
        return [c for c in self._challenges.values() if player_id in (c.sender.id, c.target.id)]
